// deploy/kubernetes read as kustomize reads it: the manifests its kustomization lists, the Secret it generates from the
// operator's secret.env (its keys from secret.env.example), and `kubectl kustomize` on a copy where secret.env is written.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { parse, parseAllDocuments } from 'yaml';

export const DIR = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));
export type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [k: string]: any };

export const yamlDocs = (file: string): Obj[] => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Obj);
export const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as {
  resources: string[]; secretGenerator?: { name: string; envs?: string[] }[]; labels?: { pairs: Record<string, string> }[];
};
/** The YAML files beside kustomization.yaml. */
export const manifestFiles = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
export const objects: Obj[] = kustomization.resources.flatMap((f) => yamlDocs(join(DIR, f)));

export function one(kind: string, name?: string): Obj {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0];
}

/** The keys of the generated Secret, as secret.env.example lists them. */
export const SECRET_EXAMPLE = join(DIR, 'secret.env.example');
export const secretKeys = readFileSync(SECRET_EXAMPLE, 'utf8').split('\n').filter((l) => /^\w+=/.test(l)).map((l) => l.split('=')[0]);

/** `kubectl kustomize` of a copy of the folder with a secret.env of these values (and any more files laid in it). */
export function kustomize(env: Record<string, string>, extra: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string; error?: Error; objects: () => Obj[] } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-kustomize-'));
  try {
    cpSync(DIR, dir, { recursive: true });
    writeFileSync(join(dir, 'secret.env'), Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join(''));
    for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
    const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 30_000 });
    return { ...run, objects: () => parseAllDocuments(run.stdout).map((d) => d.toJS() as Obj) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
