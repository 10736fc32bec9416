import fs from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';

/** The deploy files' readers, for the specs that hold them to their rules. */

export const ROOT = path.resolve(__dirname, '../..');

export type Service = {
  image?: string;
  build?: unknown;
  restart?: string;
  command?: string[];
  ports?: unknown[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  stop_grace_period?: string;
};

export type Compose = { services: Record<string, Service> };

export const readCompose = (file = 'docker-compose.yml'): Compose =>
  load(fs.readFileSync(path.join(ROOT, file), 'utf8')) as Compose;

export type Instruction = { readonly keyword: string; readonly args: string };

/**
 * A Dockerfile's instructions, in order: comments dropped, `\`-continued lines joined,
 * keywords upper-cased. Enough for this repo's Dockerfile (no heredocs, no parser directives
 * changing the escape character).
 */
export const readDockerfile = (file = 'Dockerfile'): Instruction[] => {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole === '') continue;
    const space = whole.search(/\s/);
    out.push({
      keyword: (space < 0 ? whole : whole.slice(0, space)).toUpperCase(),
      args: space < 0 ? '' : whole.slice(space + 1).trim(),
    });
  }
  return out;
};

/** The instructions of the image's last stage (after its last FROM): what the image runs. */
export const finalStage = (instructions: readonly Instruction[]): Instruction[] => {
  const from = instructions.map((i) => i.keyword).lastIndexOf('FROM');
  return instructions.slice(from + 1);
};

/** HEALTHCHECK's command in exec form (`CMD ["node", …]`), its options dropped. */
export const healthcheckCommand = (stage: readonly Instruction[]): string[] | null => {
  const check = stage.find((i) => i.keyword === 'HEALTHCHECK');
  const cmd = check && /(?:^|\s)CMD\s+(\[.*\])$/.exec(check.args);
  return cmd ? (JSON.parse(cmd[1]) as string[]) : null;
};

/** The package.json scripts the image sets (`npm pkg set scripts.NAME="…"`), by name. */
export const imageScripts = (stage: readonly Instruction[]): Record<string, string> => {
  const scripts: Record<string, string> = {};
  for (const run of stage.filter((i) => i.keyword === 'RUN' && /npm pkg set/.test(i.args))) {
    for (const [, name, value] of run.args.matchAll(/scripts\.([\w-]+)="([^"]*)"/g)) {
      scripts[name] = value;
    }
  }
  return scripts;
};
