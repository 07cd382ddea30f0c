import { Environment, ParseError, type ASTNode } from '@marcbachmann/cel-js';
import { isRecord } from '../types.js';
import { celChildren } from '../../binding/cel-ast.js';

/**
 * CEL for ValidatingAdmissionPolicies, on @marcbachmann/cel-js (the project's CEL library): the
 * variables a real server declares (`object`, `oldObject`, `request`, `namespaceObject`,
 * `params` when the policy has a paramKind, `variables`), compile errors worded as the apiserver
 * words them (`compilation failed: ERROR: <input>:1:5: ...`), the result types it requires, and
 * evaluation errors as `expression '<expr>' resulted in error: <why>`. Pure: no I/O.
 *
 * What differs from cel-go with the Kubernetes libraries is listed in docs/kubesim.md; an
 * expression kubesim cannot run (an unknown function, `authorizer`) is refused when the policy is
 * written, so a chart never passes in kubesim with a rule it would not run.
 */

export type ExpressionRole =
  'validation' | 'matchCondition' | 'messageExpression' | 'auditAnnotation' | 'variable';

export interface CompileOptions {
  role: ExpressionRole;
  /** The policy has a paramKind: `params` is declared. */
  hasParams: boolean;
  /**
   * The variables declared before this expression with their types (a variable sees only
   * earlier ones); undefined where `variables` is not declared at all (matchConditions).
   */
  variables: readonly DeclaredVariable[] | undefined;
}

/** The values an expression sees; JSON as stored (numbers are converted to CEL ints here). */
export interface CelInputs {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
  namespaceObject: unknown;
  params: unknown;
  /** Lazily evaluated variables by name. */
  variables: Record<string, () => unknown>;
}

export interface DeclaredVariable {
  name: string;
  /** The CEL type its expression checks to (`bool`, `list<string>`, `dyn`, ...). */
  type: string;
}

export type Program = (inputs: CelActivation) => unknown;

export type Compiled =
  | { ok: true; run: Program; outputType: string }
  /** `detail` is the field error's detail (`compilation failed: ...` or `must evaluate to ...`). */
  | { ok: false; detail: string };

/** An evaluation failure in cel-go's words (the part after `resulted in error: `). */
export class CelEvaluationError extends Error {
  override name = 'CelEvaluationError';
}

/** kubernetes.AdmissionRequest as BuildRequestType declares it: a typo in a field fails to compile. */
const REQUEST_SCHEMA = {
  kind: { group: 'string', version: 'string', kind: 'string' },
  resource: { group: 'string', version: 'string', resource: 'string' },
  subResource: 'string',
  requestKind: { group: 'string', version: 'string', kind: 'string' },
  requestResource: { group: 'string', version: 'string', resource: 'string' },
  requestSubResource: 'string',
  name: 'string',
  namespace: 'string',
  operation: 'string',
  userInfo: {
    username: 'string',
    uid: 'string',
    groups: 'list<string>',
    extra: 'map<string, list<string>>',
  },
  dryRun: 'bool',
  options: 'dyn',
} as const;

/**
 * Parse-time bounds: the library has no cost budget, so an expression is bounded by size. These
 * are far above what a policy needs and keep a runaway expression from blocking the simulator.
 */
const LIMITS = {
  maxAstNodes: 4000,
  maxDepth: 64,
  maxListElements: 1000,
  maxMapEntries: 1000,
  maxCallArguments: 32,
};

/** The runtime class of `variables`: one typed field per declared variable, evaluated on first read. */
class PolicyVariables {}

let base: Environment | undefined;
function baseEnvironment(): Environment {
  base ??= new Environment({ enableOptionalTypes: true, limits: LIMITS })
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', { schema: { ...REQUEST_SCHEMA } })
    // A typed object on a real server (kubernetes.Namespace); dyn here so `namespaceObject == null` type-checks.
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('params', 'dyn');
  return base;
}

const environments = new Map<string, Environment>();

/**
 * The environment for one set of declared variables: `variables` typed with one field per
 * variable (its checked type), as the composition compiler declares it; without `variables` for
 * matchConditions. Environments are shared by every policy with the same declarations.
 */
function environment(variables: readonly DeclaredVariable[] | undefined): Environment {
  if (!variables) return baseEnvironment();
  const key = JSON.stringify(variables);
  let env = environments.get(key);
  if (!env) {
    const fields: Record<string, string> = {};
    for (const v of variables) fields[v.name] = v.type;
    env = baseEnvironment().clone();
    try {
      env.registerType({ name: 'kubesim.PolicyVariables', ctor: PolicyVariables, fields });
    } catch {
      // A type the library cannot declare a field with: fall back to dyn fields.
      env = baseEnvironment().clone();
      env.registerType({
        name: 'kubesim.PolicyVariables',
        ctor: PolicyVariables,
        fields: Object.fromEntries(variables.map((v) => [v.name, 'dyn'])),
      });
    }
    env.registerVariable('variables', 'kubesim.PolicyVariables');
    // Bounded: policies are few; a runaway set of distinct declarations just starts over.
    if (environments.size > 500) environments.clear();
    environments.set(key, env);
  }
  return env;
}

const RESULT_TYPES: Record<ExpressionRole, readonly string[] | undefined> = {
  validation: ['bool'],
  matchCondition: ['bool'],
  messageExpression: ['string'],
  // cel-js calls null_type `null`.
  auditAnnotation: ['string', 'null'],
  variable: undefined,
};

/** cel-go's issue text: `ERROR: <input>:L:C: msg` and the source line with a caret. */
function issue(expression: string, pos: number, message: string): string {
  const before = expression.slice(0, Math.max(0, pos));
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = pos - lineStart + 1;
  const text = expression.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col}: ${message}\n | ${text}\n | ${'.'.repeat(Math.max(0, col - 1))}^`;
}

/**
 * What cel-js would accept but a real server's environment does not declare: `params` without a
 * paramKind, and `authorizer` (kubesim has no authorizer library). The first one found, as cel-go
 * reports it.
 */
function undeclared(expression: string, root: ASTNode, opts: CompileOptions): string | undefined {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.op === 'id' && node.args === 'params' && !opts.hasParams)
      return issue(expression, node.start, "undeclared reference to 'params' (in container '')");
    if (node.op === 'id' && node.args === 'authorizer')
      return issue(
        expression,
        node.start,
        "undeclared reference to 'authorizer' (in container '') (kubesim does not provide the authorizer library)",
      );
    stack.push(...celChildren(node));
  }
  return undefined;
}

/** A cel-js type-check error in cel-go's words where they differ. */
function checkMessage(err: { code?: string; summary?: string; message: string }): string {
  const summary = err.summary ?? err.message.split('\n')[0] ?? '';
  if (err.code === 'unknown_variable') {
    const name = /Unknown variable: (.*)$/.exec(summary)?.[1] ?? summary;
    return `undeclared reference to '${name}' (in container '')`;
  }
  if (err.code === 'no_such_key')
    return `undefined field '${/No such key: (.*)$/.exec(summary)?.[1] ?? summary}'`;
  return summary;
}

function positionOf(err: unknown): number {
  if (!isRecord(err)) return 0;
  const node = err['node'];
  if (isRecord(node) && typeof node['pos'] === 'number') return node['pos'];
  const range = err['range'];
  if (isRecord(range) && typeof range['start'] === 'number') return range['start'];
  return 0;
}

/** An error the library raised while evaluating, in cel-go's wording. */
export function evaluationMessage(err: unknown): string {
  if (err instanceof CelEvaluationError) return err.message;
  const summary =
    isRecord(err) && typeof err['summary'] === 'string'
      ? err['summary']
      : err instanceof Error
        ? (err.message.split('\n')[0] ?? '')
        : String(err);
  return summary.replace(/^No such key: /, 'no such key: ');
}

export function compileExpression(expression: string, opts: CompileOptions): Compiled {
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = environment(opts.variables).parse(expression);
  } catch (err) {
    const summary = err instanceof ParseError ? err.summary : evaluationMessage(err);
    return {
      ok: false,
      detail: `compilation failed: ${issue(expression, positionOf(err), `Syntax error: ${summary}`)}`,
    };
  }
  const refused = undeclared(expression, parsed.ast, opts);
  if (refused) return { ok: false, detail: `compilation failed: ${refused}` };
  const checked = parsed.check();
  if (!checked.valid) {
    const err = checked.error;
    const message = err ? checkMessage(err) : 'type check failed';
    return { ok: false, detail: `compilation failed: ${issue(expression, positionOf(err), message)}` };
  }
  const outputType = checked.type ?? 'dyn';
  const want = RESULT_TYPES[opts.role];
  if (want && !want.includes(outputType)) {
    const celGo = (t: string) => (t === 'null' ? 'null_type' : t);
    const expected = want.length === 1 ? want[0] : `one of [${want.map(celGo).join(' ')}]`;
    return { ok: false, detail: `must evaluate to ${expected} but got ${celGo(outputType)}` };
  }
  return { ok: true, run: (activation): unknown => parsed(activation) as unknown, outputType };
}

/** JSON as CEL values: integral numbers are CEL ints (BigInt), as Kubernetes' integer fields are. */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v);
    return out;
  }
  return value;
}

/** The activation of one evaluation: converted inputs, and variables evaluated once, on first use. */
export type CelActivation = Record<string, unknown>;

export function activation(inputs: CelInputs): CelActivation {
  const variables = new PolicyVariables();
  for (const [name, evaluate] of Object.entries(inputs.variables)) {
    let done = false;
    let value: unknown;
    Object.defineProperty(variables, name, {
      enumerable: true,
      get() {
        if (!done) {
          value = evaluate();
          done = true;
        }
        return value;
      },
    });
  }
  return {
    object: toCel(inputs.object),
    oldObject: toCel(inputs.oldObject),
    request: toCel(inputs.request),
    namespaceObject: toCel(inputs.namespaceObject),
    params: toCel(inputs.params),
    variables,
  };
}
