import type { OpenAPIObject } from '@nestjs/swagger';

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  allOf?: Schema[];
};

export type Operation = {
  readonly method: string;
  /** As OpenAPI writes it: `/v1/nodes/{nodeId}`. */
  readonly path: string;
  /** As Fastify registers it: `/v1/nodes/:nodeId`. */
  readonly route: string;
  readonly pathParams: readonly string[];
  /** The JSON body's top-level properties and their schemas ($refs resolved), if it has a body. */
  readonly bodyProperties: Readonly<Record<string, Schema>> | null;
  readonly public: boolean;
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Follows `#/components/schemas/X` references (and a single allOf) to the schema itself. */
export const resolveSchema = (document: OpenAPIObject, schema: Schema | undefined): Schema => {
  let current: Schema = schema ?? {};
  for (let hops = 0; hops < 20; hops++) {
    if (current.$ref) {
      const name = current.$ref.replace('#/components/schemas/', '');
      current = (document.components?.schemas?.[name] as Schema | undefined) ?? {};
    } else if (current.allOf?.length === 1) {
      current = current.allOf[0];
    } else break;
  }
  return current;
};

/** Every operation of an OpenAPI document, for tests that walk the whole API. */
export const operationsOf = (document: OpenAPIObject): Operation[] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): Operation => {
      const op = item[m]!;
      const body = op.requestBody as
        { content?: Record<string, { schema?: Schema }> } | { $ref: string } | undefined;
      const json = body && 'content' in body ? body.content?.['application/json'] : undefined;
      const bodySchema = json ? resolveSchema(document, json.schema) : null;
      const security = op.security ?? document.security ?? [];
      return {
        method: m.toUpperCase(),
        path,
        route: path.replace(/\{([^}]+)\}/g, ':$1'),
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
        bodyProperties: bodySchema ? (bodySchema.properties ?? {}) : null,
        public: security.length === 0,
      };
    }),
  );
