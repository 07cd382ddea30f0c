import { parse as parseYaml } from 'yaml';
import type { EndpointTrafficPolicyInput } from '../../../api/schemas/modules/traffic-policy.js';
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENT_NESTING, documentLimitViolation } from '../document-limits.js';
import { fieldError } from './field-error.js';

function parseDocument(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    // not JSON: YAML is the other accepted syntax
  }
  try {
    return { value: parseYaml(text) as unknown };
  } catch (err) {
    return { error: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
  }
}

/**
 * `value` must parse as JSON or YAML into an object (a mapping, not a list or scalar). Size and
 * nesting are checked first, so no parser ever sees a document that could exhaust the process.
 */
export function validateTrafficPolicy(input: EndpointTrafficPolicyInput, field: string): void {
  const violation = documentLimitViolation(input.value);
  if (violation?.rule === 'size') {
    throw fieldError(
      'ERR_394',
      `${field}.value`,
      `is ${violation.bytes} bytes of UTF-8; a policy document may have at most ${MAX_DOCUMENT_BYTES}`,
    );
  }
  if (violation?.rule === 'nesting') {
    throw fieldError(
      'ERR_394',
      `${field}.value`,
      `nests deeper than ${MAX_DOCUMENT_NESTING} levels (flow brackets and block indentation levels count)`,
    );
  }
  const parsed = parseDocument(input.value);
  if ('error' in parsed) {
    throw fieldError('ERR_396', `${field}.value`, `is neither valid JSON nor valid YAML: ${parsed.error}`);
  }
  const v = parsed.value;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw fieldError(
      'ERR_396',
      `${field}.value`,
      'must be a JSON or YAML object (a mapping of policy phases)',
    );
  }
}
