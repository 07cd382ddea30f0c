import { activation, CelEvaluationError, evaluationMessage, type CelInputs } from './cel.js';
import type { CompiledExpression, CompiledPolicy } from './compile.js';

/**
 * One policy evaluated for one request, binding and param (the validating plugin's
 * validator.Validate): matchConditions, then every validation with its message, then the audit
 * annotations. Pure over its inputs.
 */

export interface PolicyDecision {
  action: 'admit' | 'deny';
  /** The StatusReason of a failed validation ('' for an evaluation error: Invalid). */
  reason: string;
  message: string;
}

export interface AuditAnnotationResult {
  key: string;
  /** undefined: excluded (empty or null); an error fails the request under failurePolicy Fail. */
  value?: string;
  error?: string;
}

export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationResult[];
}

/** Longest messageExpression result shown (celconfig.MaxEvaluatedMessageExpressionSizeBytes). */
const MAX_MESSAGE_BYTES = 5 * 1024;

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

function run(e: CompiledExpression, act: Record<string, unknown>): Outcome {
  try {
    return { ok: true, value: e.run(act) };
  } catch (err) {
    return { ok: false, error: `expression '${e.expression}' resulted in error: ${evaluationMessage(err)}` };
  }
}

/** The `variables` of one evaluation: each evaluated on first use, its failure named as cel-go names it. */
function variableThunks(policy: CompiledPolicy, getActivation: () => Record<string, unknown>) {
  const out: Record<string, () => unknown> = {};
  for (const v of policy.variables) {
    out[v.name] = () => {
      try {
        return v.run(getActivation());
      } catch (err) {
        throw new CelEvaluationError(
          `composited variable "${v.name}" fails to evaluate: ${evaluationMessage(err)}`,
        );
      }
    };
  }
  return out;
}

export function validatePolicy(policy: CompiledPolicy, inputs: Omit<CelInputs, 'variables'>): ValidateResult {
  const failClosed = policy.failurePolicy !== 'Ignore';
  const errorDecision = (message: string): PolicyDecision => ({
    action: failClosed ? 'deny' : 'admit',
    reason: '',
    message,
  });
  let act: Record<string, unknown> = {};
  act = activation({ ...inputs, variables: variableThunks(policy, () => act) });

  // matchConditions: any false skips the policy; errors (with none false) follow the failure policy.
  const errors: string[] = [];
  for (const m of policy.matchConditions) {
    const r = run(m, act);
    if (!r.ok) errors.push(r.error);
    else if (r.value === false) return { decisions: [], auditAnnotations: [] };
  }
  if (errors.length) {
    if (!failClosed) return { decisions: [], auditAnnotations: [] };
    return {
      decisions: [errorDecision(errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`)],
      auditAnnotations: [],
    };
  }

  const decisions = policy.validations.map((v): PolicyDecision => {
    const r = run(v, act);
    if (!r.ok) return errorDecision(r.error);
    if (r.value === true) return { action: 'admit', reason: '', message: '' };
    let message = '';
    if (v.messageExpression) {
      try {
        const m: unknown = v.messageExpression(act);
        if (typeof m === 'string') {
          const trimmed = m.trim();
          if (Buffer.byteLength(trimmed) <= MAX_MESSAGE_BYTES && !trimmed.includes('\n')) message = trimmed;
        }
      } catch {
        // A failing messageExpression falls back to the message, as the real validator does.
      }
    }
    if (!message && v.message) message = v.message.trim();
    if (!message) message = `failed expression: ${v.expression.trim()}`;
    return { action: 'deny', reason: v.reason ?? 'Invalid', message };
  });

  const auditAnnotations = policy.auditAnnotations.map((a): AuditAnnotationResult => {
    const r = run(a, act);
    if (!r.ok) return failClosed ? { key: a.key, error: r.error } : { key: a.key };
    if (r.value === null) return { key: a.key };
    if (typeof r.value !== 'string')
      return {
        key: a.key,
        error: `valueExpression '${a.expression}' resulted in unsupported return type: ${typeof r.value}. Return type must be either string or null.`,
      };
    const value = r.value.trim();
    return value ? { key: a.key, value } : { key: a.key };
  });
  return { decisions, auditAnnotations };
}
