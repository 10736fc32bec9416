import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '../../apps/control-plane/src');

const sources = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return file.endsWith('.ts') && !file.endsWith('.spec.ts') ? [file] : [];
  });

const resolveRelative = (from: string, spec: string): string | null => {
  const base = path.resolve(path.dirname(from), spec);
  for (const file of [`${base}.ts`, path.join(base, 'index.ts')])
    if (fs.existsSync(file)) return file;
  return null;
};

/**
 * What each file loads when it runs: compiled as the build compiles it, so imports used only
 * as types are gone, and only its relative `require`s of the app's own files are left.
 */
const runtimeImports = (files: readonly string[]): Map<string, string[]> =>
  new Map(
    files.map((file) => {
      const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
        },
      });
      const deps = [...outputText.matchAll(/require\("(\.[^"]*)"\)/g)]
        .map((m) => resolveRelative(file, m[1]))
        .filter((dep): dep is string => dep !== null && dep.startsWith(SRC));
      return [file, deps];
    }),
  );

/** The files on a cycle of `graph` (strongly connected components of more than one file). */
const cycles = (graph: Map<string, string[]>): string[][] => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(SRC, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
};

/*
 * Nest reads a module's imports and a provider's dependencies when their files load: in an
 * import cycle one of them is still undefined then. The faces (index.ts) re-export modules, so
 * a slice that imported a face that led back to itself would start with a hole.
 */
describe("the control plane's files, as they load at run time", () => {
  it('form no import cycle', () => {
    const graph = runtimeImports(sources(SRC));
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });

  it('would show one: a face imported back from inside its slice', () => {
    const face = path.join(SRC, 'clusters/index.ts');
    const service = path.join(SRC, 'clusters/clusters.service.ts');
    const graph = new Map([
      [face, [service]],
      [service, [face]],
    ]);
    expect(cycles(graph)).toEqual([['clusters/clusters.service.ts', 'clusters/index.ts']]);
  });
});
