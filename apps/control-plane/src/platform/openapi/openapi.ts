import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from './error-envelope.dto';
import { serveSwaggerUi } from './swagger-ui';

export const DOCS_PATH = 'docs';
export const API_VERSION = '1.0';

const ERROR_RESPONSES = [
  {
    status: 400,
    description: 'validation_failed: unknown fields, wrong types, out-of-range values',
  },
  { status: 401, description: 'unauthenticated: no token, or one that is invalid or expired' },
  { status: 403, description: 'forbidden: the token lacks a role this route needs' },
  { status: 404, description: 'not_found' },
  { status: 409, description: 'the command was refused and changed nothing (node_busy, ...)' },
  { status: 413, description: 'payload_too_large' },
  { status: 500, description: 'internal_error: details.correlationId names the request' },
  {
    status: 503,
    description:
      'unavailable: a store the request needs is not answering; nothing was done, retry (Retry-After)',
  },
] as const;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A public operation cannot answer 401/403, and a read neither refuses a command nor a body. */
const trimResponses = (document: OpenAPIObject): void => {
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation?.responses) continue;
      if (Array.isArray(operation.security) && operation.security.length === 0) {
        delete operation.responses['401'];
        delete operation.responses['403'];
      }
      if (method === 'get' || method === 'head') {
        delete operation.responses['409'];
        delete operation.responses['413'];
      }
    }
  }
};

/** Schemas a route names by reference only (`$ref`), as a lower slice names a higher one's DTO. */
const referencedModels: Array<new () => object> = [];

/** Lists `models` in every document's schemas (called where the DTO is declared). */
export const registerOpenApiModels = (...models: Array<new () => object>): void => {
  referencedModels.push(...models);
};

/** The OpenAPI 3 document of every route the Nest app has, error envelope and bearer auth included. */
export const buildOpenApiDocument = (app: NestFastifyApplication): OpenAPIObject => {
  const builder = new DocumentBuilder()
    .setTitle('Fleet control plane')
    .setDescription('Command, query and audit API of the GPU/CPU cluster control plane (v1).')
    .setVersion(API_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addSecurityRequirements('bearer');
  for (const { status, description } of ERROR_RESPONSES) {
    builder.addGlobalResponse({ status, description, type: ErrorEnvelopeDto });
  }
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorEnvelopeDto, ...referencedModels],
  });
  trimResponses(document);
  return document;
};

/**
 * Serves the document at `/docs-json` (and `/docs-yaml`) and the UI at `/docs`. These are
 * plain Fastify routes, outside Nest's guards, so they need no token. The document is built
 * on first request, when every module's routes are known.
 */
export const setupOpenApi = (app: NestFastifyApplication): void => {
  SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app), {
    ui: false,
    raw: ['json', 'yaml'],
    jsonDocumentUrl: `${DOCS_PATH}-json`,
    yamlDocumentUrl: `${DOCS_PATH}-yaml`,
  });
  serveSwaggerUi(app, `/${DOCS_PATH}`, `/${DOCS_PATH}-json`, 'Fleet control plane API');
};
