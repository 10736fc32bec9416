/**
 * The framework floor, for choosing the HTTP platform by measurement: the same trivial JSON
 * POST route (parse the body, answer a small JSON body) on bare Fastify, bare Express, and a
 * one-controller Nest app on each of Nest's two HTTP adapters. No auth, no validation, no
 * app: what each stack costs before the control plane does anything.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';

export type FrameworkKind = 'bare-express' | 'nest-fastify' | 'nest-express';

const answer = (body: unknown) => ({ ok: true, size: Object.keys(body as object).length });

@Controller()
class EchoController {
  @Post('echo')
  @HttpCode(200)
  echo(@Body() body: Record<string, unknown>) {
    return answer(body);
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

const urlOf = (server: Server): string =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export const startFramework = async (kind: FrameworkKind): Promise<{ url: string }> => {
  if (kind === 'bare-express') {
    const app = express();
    app.use(express.json({ limit: 1_048_576 }));
    app.post('/echo', (req, res) => {
      res.json(answer(req.body));
    });
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    return { url: urlOf(server) };
  }
  const adapter =
    kind === 'nest-fastify'
      ? new FastifyAdapter({ logger: false, bodyLimit: 1_048_576 })
      : new ExpressAdapter(express());
  const app = await NestFactory.create(EchoModule, adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { url: urlOf(app.getHttpServer() as Server) };
};
