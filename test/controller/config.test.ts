import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadControllerSettings } from '../../src/cli/controller-command.js';
import { UsageError } from '../../src/cli/command.js';
import { applyFlagOverrides, resolveControllerConfig } from '../../src/controller/config.js';

const env = { ENDPOINT_BINDER_API_KEY: 'key-0123456789', POD_NAMESPACE: 'ops' };

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'eb-ctl-'));
  const p = join(dir, 'config.yaml');
  writeFileSync(p, text);
  return p;
}

async function usageError(argv: string[], e: Record<string, string | undefined> = env): Promise<string> {
  try {
    await loadControllerSettings(argv, e);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

describe('controller config', () => {
  it('fills every default and takes the namespace from POD_NAMESPACE', () => {
    const r = resolveControllerConfig({ api: { baseUrl: 'https://api.example.com' } }, env);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config).toMatchObject({
      apiKey: 'key-0123456789',
      operatorNamespace: 'ops',
      releaseName: 'endpoint-binder',
      resyncIntervalSeconds: 300,
      writeConcurrency: 16,
      http: { listen: '0.0.0.0:8080' },
      bindings: {
        enabled: true,
        endpointSelector: 'true',
        clusterDomain: 'cluster.local',
        portRange: { min: 10000, max: 19999 },
        serviceLabels: {},
        serviceAnnotations: {},
      },
    });
  });

  it('reports every bad field at once, by path', () => {
    const r = resolveControllerConfig(
      {
        api: { baseUrl: 'ftp://x' },
        bindings: {
          endpointSelector: '  ',
          portRange: { min: 20000, max: 10000 },
          serviceLabels: { 'bad key!': 'v' },
        },
        writeConcurrency: 0,
        surprise: 1,
      },
      {},
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.errors.join('\n');
    expect(text).toContain('api.baseUrl: must be an http:// or https:// URL');
    expect(text).toContain('bindings.endpointSelector: must not be empty');
    expect(text).toContain('bindings.portRange.min: min must not be greater than max');
    expect(text).toContain('bindings.serviceLabels.bad key!');
    expect(text).toContain('writeConcurrency');
    expect(text).toMatch(/surprise/);
    expect(text).toContain('ENDPOINT_BINDER_API_KEY');
  });

  it('lets flags override the file, numbers parsed', () => {
    const raw = applyFlagOverrides(
      { bindings: { portRange: { min: 11000 } } },
      {
        'port-range-max': '12000',
        'endpoint-selector': "endpoint.url.contains(',')",
        'api-url': 'http://127.0.0.1:1',
      },
    );
    const r = resolveControllerConfig(raw, env);
    expect(r.ok && r.config.bindings.portRange).toEqual({ min: 11000, max: 12000 });
    expect(r.ok && r.config.bindings.endpointSelector).toBe("endpoint.url.contains(',')");
  });

  it('keeps a selector with quotes, commas and newlines from the file unchanged', async () => {
    const selector = `endpoint.namespace in ['a', "b,c"] &&\n  endpoint.port != 22`;
    const p = file(
      `api:\n  baseUrl: http://127.0.0.1:9\nbindings:\n  endpointSelector: ${JSON.stringify(selector)}\n`,
    );
    const s = await loadControllerSettings(['--config', p], env);
    expect(s.config.bindings.endpointSelector).toBe(selector);
  });

  it('carries the selector compiled once to the controller; the uninstall, which never evaluates it, gets none', async () => {
    const p = file(
      'api:\n  baseUrl: http://127.0.0.1:9\nbindings:\n  endpointSelector: "endpoint.port > 1024"\n',
    );
    const s = await loadControllerSettings(['--config', p], env);
    expect(s.selector?.expression, 'the compiled selector the settings carry').toBe('endpoint.port > 1024');
    const u = await loadControllerSettings(['--config', p], env, { compileSelector: false });
    expect(u.selector).toBeUndefined();
  });

  it('refuses a selector that does not compile, with the positioned message', async () => {
    const p = file(
      'api:\n  baseUrl: http://127.0.0.1:9\nbindings:\n  endpointSelector: "endpoint.host.endsWith(\'.prod\'"\n',
    );
    const msg = await usageError(['--config', p]);
    expect(msg).toContain('bindings.endpointSelector');
    expect(msg).toMatch(/\^/);
  });

  it('refuses matches() because a regex could hang the process', async () => {
    const msg = await usageError([
      '--api-url',
      'http://127.0.0.1:9',
      '--endpoint-selector',
      "endpoint.host.matches('^a+$')",
    ]);
    expect(msg).toContain('bindings.endpointSelector');
    expect(msg).toMatch(/matches/);
  });

  it('never accepts the API key as a flag', async () => {
    const msg = await usageError(['--api-url', 'http://127.0.0.1:9', '--api-key', 'x']);
    expect(msg).toMatch(/api-key/);
  });

  it('refuses a config file that nests too deep or is too large, before parsing it', async () => {
    expect(await usageError(['--config', file(`a: ${'['.repeat(100_000)}`)])).toMatch(
      /nests deeper than 64 levels/,
    );
    expect(await usageError(['--config', file(`# ${'x'.repeat(1_100_000)}\n`)])).toMatch(
      /at most 1048576 are read/,
    );
  });
});
