import fs from 'node:fs';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** The only files of swagger-ui-dist the page needs, so no path from a URL reaches the disk. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const page = (base: string, title: string): string => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${title}</title>
  <link rel="stylesheet" href="${base}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${base}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}/swagger-ui-bundle.js"></script>
  <script src="${base}/swagger-ui-standalone-preset.js"></script>
  <script src="${base}/swagger-ui-init.js"></script>
</body>
</html>
`;

const init = (documentUrl: string): string => `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(documentUrl)},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  persistAuthorization: true,
});
`;

/**
 * Swagger UI at `base`, reading `documentUrl`. Served from swagger-ui-dist with plain Fastify
 * routes rather than SwaggerModule's UI, which needs @fastify/static (whose current major
 * loads an ESM-only dependency that jest on Node 20 cannot require).
 */
export const serveSwaggerUi = (
  app: NestFastifyApplication,
  base: string,
  documentUrl: string,
  title: string,
): void => {
  const dist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const fastify = app.getHttpAdapter().getInstance();
  const html = page(base, title);
  fastify.get(base, async (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
  fastify.get(`${base}/swagger-ui-init.js`, async (_request, reply) =>
    reply.type(ASSETS['swagger-ui-bundle.js']).send(init(documentUrl)),
  );
  for (const [file, type] of Object.entries(ASSETS)) {
    fastify.get(`${base}/${file}`, async (_request, reply) => {
      let body = cache.get(file);
      if (!body) {
        body = await fs.promises.readFile(path.join(dist, file));
        cache.set(file, body);
      }
      return reply.type(type).header('cache-control', 'public, max-age=3600').send(body);
    });
  }
};
