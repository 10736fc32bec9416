import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'apps/control-plane/src');

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

/** Every file `file` loads, itself included. */
const closure = (graph: Map<string, string[]>, file: string): Set<string> => {
  const seen = new Set([file]);
  const todo = [file];
  while (todo.length > 0) {
    for (const dep of graph.get(todo.pop()!) ?? []) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      todo.push(dep);
    }
  }
  return seen;
};

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

/*
 * Mutation testing reruns a mutated file's unit specs for every mutant: a domain file that
 * loaded a slice's face would load its Nest module, controllers and their libraries each time
 * (about half a second a spec file).
 */
describe('the domain files mutation testing mutates', () => {
  it("load no slice's face, module or controller", () => {
    const graph = runtimeImports(sources(SRC));
    const { mutate } = JSON.parse(fs.readFileSync(path.join(ROOT, 'stryker.config.json'), 'utf8'));
    const mutated = (mutate as string[])
      .map((file) => path.join(ROOT, file))
      .filter((file) => file.startsWith(SRC));
    expect(mutated.length).toBeGreaterThan(10);
    const heavy = mutated.flatMap((file) =>
      [...closure(graph, file)]
        .filter((dep) => /(index|\.module|\.controller)\.ts$/.test(dep))
        .map((dep) => `${path.relative(SRC, file)} loads ${path.relative(SRC, dep)}`),
    );
    expect(heavy).toEqual([]);
  });
});
