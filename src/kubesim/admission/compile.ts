import type { PolicySpec } from '../resources/admission-schema.js';
import { field, type FieldError } from '../validation/field.js';
import { compileExpression, type CompileOptions, type DeclaredVariable, type Program } from './cel.js';

/**
 * A ValidatingAdmissionPolicy's expressions compiled once: what validation reports at write time
 * (field errors on the expressions that do not compile) and what admission runs. Pure.
 */

export interface CompiledExpression {
  expression: string;
  run: Program;
}

export interface CompiledPolicy {
  name: string;
  spec: PolicySpec;
  failurePolicy: string;
  matchConditions: (CompiledExpression & { name: string })[];
  variables: (CompiledExpression & { name: string })[];
  validations: (CompiledExpression & { message?: string; reason?: string; messageExpression?: Program })[];
  auditAnnotations: (CompiledExpression & { key: string })[];
}

/** The policy, and the compile error of each expression that failed, by field path. */
export function compilePolicy(
  name: string,
  spec: PolicySpec,
): { policy: CompiledPolicy; errors: Map<string, FieldError> } {
  const errors = new Map<string, FieldError>();
  const hasParams = spec.paramKind !== undefined;
  let lastType = 'dyn';
  const one = (expression: string, path: string, opts: Omit<CompileOptions, 'hasParams'>) => {
    const compiled = compileExpression(expression, { ...opts, hasParams });
    if (compiled.ok) {
      lastType = compiled.outputType;
      return compiled.run;
    }
    errors.set(path, field.invalid(path, expression, compiled.detail));
    return undefined;
  };
  const policy: CompiledPolicy = {
    name,
    spec,
    failurePolicy: spec.failurePolicy ?? 'Fail',
    matchConditions: [],
    variables: [],
    validations: [],
    auditAnnotations: [],
  };
  (spec.matchConditions ?? []).forEach((m, i) => {
    const expression = m.expression?.trim() ?? '';
    if (!expression) return;
    const run = one(expression, `spec.matchConditions[${i}].expression`, {
      role: 'matchCondition',
      variables: undefined,
    });
    if (run) policy.matchConditions.push({ name: m.name ?? '', expression, run });
  });
  const declared: DeclaredVariable[] = [];
  (spec.variables ?? []).forEach((v, i) => {
    const expression = v.expression ?? '';
    if (!expression.trim()) return;
    const run = one(expression, `spec.variables[${i}].expression`, {
      role: 'variable',
      variables: [...declared],
    });
    // A variable that does not compile is still declared (as dyn), so later uses report only it.
    if (v.name) declared.push({ name: v.name, type: run ? lastType : 'dyn' });
    if (run) policy.variables.push({ name: v.name ?? '', expression, run });
  });
  (spec.validations ?? []).forEach((v, i) => {
    const expression = v.expression ?? '';
    if (!expression.trim()) return;
    const run = one(expression, `spec.validations[${i}].expression`, {
      role: 'validation',
      variables: declared,
    });
    const messageExpression = v.messageExpression?.trim()
      ? one(v.messageExpression, `spec.validations[${i}].messageExpression`, {
          role: 'messageExpression',
          variables: declared,
        })
      : undefined;
    if (run)
      policy.validations.push({
        expression,
        run,
        ...(v.message !== undefined ? { message: v.message } : {}),
        ...(v.reason !== undefined ? { reason: v.reason } : {}),
        ...(messageExpression ? { messageExpression } : {}),
      });
  });
  (spec.auditAnnotations ?? []).forEach((a, i) => {
    const expression = a.valueExpression?.trim() ?? '';
    if (!expression) return;
    const run = one(expression, `spec.auditAnnotations[${i}].valueExpression`, {
      role: 'auditAnnotation',
      variables: declared,
    });
    if (run) policy.auditAnnotations.push({ key: a.key ?? '', expression, run });
  });
  return { policy, errors };
}
