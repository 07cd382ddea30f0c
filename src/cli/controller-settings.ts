import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { EndpointSelector } from '../binding/selector.js';
import {
  ControllerConfigSchema,
  CONTROLLER_FLAG_PATHS,
  applyFlagOverrides,
  resolveControllerConfig,
  type ControllerConfig,
  type ControllerFlag,
} from '../controller/config.js';
import { compileSelectorSetting } from '../controller/selector-setting.js';
import { UsageError } from './command.js';
import { parseConfigText } from './config-text.js';
import { explainUnknownKeys } from './did-you-mean.js';

/**
 * The controller's settings from its three sources (config file, flags, environment), read the
 * same way by `controller`, `uninstall` and `check`. Problems are collected, not thrown, so
 * `check --config-only` can list every one of them; flag syntax alone is a usage error.
 */

export interface LoadedControllerSettings {
  config: ControllerConfig;
  /** `config.bindings.endpointSelector` compiled (absent when the caller asked not to compile it). */
  selector?: EndpointSelector | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

export type SettingsResult =
  | { ok: true; settings: LoadedControllerSettings; sources: string }
  | { ok: false; problems: string[]; sources: string };

const stringFlags = Object.fromEntries(
  Object.keys(CONTROLLER_FLAG_PATHS).map((k) => [k, { type: 'string' as const }]),
) as Record<ControllerFlag, { type: 'string' }>;

/** The flags every command that reads controller settings accepts. */
export const CONTROLLER_SETTINGS_FLAGS = {
  ...stringFlags,
  config: { type: 'string' as const },
  kubeconfig: { type: 'string' as const },
  context: { type: 'string' as const },
};

/** The settings' flags with values (parsed by `parseArgs`), as `readControllerSettings` takes them. */
export type SettingsFlagValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** Parses argv holding only settings flags; unknown flags are a usage error. */
export function parseSettingsFlags(argv: string[]): SettingsFlagValues {
  try {
    return parseArgs({
      args: argv,
      options: CONTROLLER_SETTINGS_FLAGS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function stringFlag(values: SettingsFlagValues, name: string, problems: string[]): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0) {
    problems.push(`--${name}: must not be empty`);
    return undefined;
  }
  return v;
}

/** The selector text the merged config holds (its default when absent), for compiling even when other fields fail. */
function selectorText(merged: Record<string, unknown>): string | undefined {
  const bindings = merged['bindings'];
  if (bindings === undefined) return 'true';
  if (typeof bindings !== 'object' || bindings === null) return undefined;
  const s = (bindings as Record<string, unknown>)['endpointSelector'];
  if (s === undefined) return 'true';
  return typeof s === 'string' && s.trim().length > 0 ? s.trim() : undefined;
}

/** Reads file, flags and environment into one validated config; every problem at once. */
export async function readControllerSettings(
  values: SettingsFlagValues,
  env: Record<string, string | undefined>,
  /** false: the selector is not compiled (the uninstall never evaluates it and must run when it is broken). */
  opts: { compileSelector?: boolean } = {},
): Promise<SettingsResult> {
  const problems: string[] = [];
  const configPath = stringFlag(values, 'config', problems);
  const kubeconfig = stringFlag(values, 'kubeconfig', problems);
  const context = stringFlag(values, 'context', problems);
  const sources = [configPath ? `file ${configPath}` : undefined, 'flags', 'environment']
    .filter(Boolean)
    .join(', ');
  let raw: Record<string, unknown> = {};
  if (configPath) {
    try {
      const parsed = parseConfigText(await readFile(configPath, 'utf8'), configPath) ?? {};
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        problems.push(`config file ${configPath}: (root): must be a mapping`);
      } else raw = parsed as Record<string, unknown>;
    } catch (err) {
      problems.push(
        err instanceof UsageError
          ? err.message
          : `cannot read config file ${configPath}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  const flagValues: Partial<Record<ControllerFlag, string>> = {};
  for (const k of Object.keys(CONTROLLER_FLAG_PATHS) as ControllerFlag[]) {
    const v = values[k];
    if (typeof v === 'string') flagValues[k] = v;
  }
  const merged = applyFlagOverrides(raw, flagValues);
  const r = resolveControllerConfig(merged, env);
  if (!r.ok) problems.push(...explainUnknownKeys(r.errors, ControllerConfigSchema));
  // The selector is compiled even when other fields fail, so its error (with its caret) is listed too.
  const selector = r.ok ? r.config.bindings.endpointSelector : selectorText(merged);
  const compiled =
    selector !== undefined && opts.compileSelector !== false ? compileSelectorSetting(selector) : undefined;
  if (compiled?.ok === false) problems.push(compiled.message);
  if (problems.length > 0 || !r.ok) return { ok: false, problems, sources };
  return {
    ok: true,
    settings: {
      config: r.config,
      selector: compiled?.ok ? compiled.selector : undefined,
      kubeconfig,
      context,
    },
    sources,
  };
}

/** The controller's path: every problem in one usage error (exit 2). */
export async function loadControllerSettings(
  argv: string[],
  env: Record<string, string | undefined>,
  opts: { compileSelector?: boolean } = {},
): Promise<LoadedControllerSettings> {
  const values = parseSettingsFlags(argv);
  const r = await readControllerSettings(values, env, opts);
  if (r.ok) return r.settings;
  throw new UsageError(`invalid config (${r.sources}):\n${r.problems.map((p) => `  ${p}`).join('\n')}`);
}
