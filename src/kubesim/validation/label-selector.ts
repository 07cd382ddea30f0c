import type { LabelSelectorObject } from '../selectors.js';
import { field, type FieldError } from './field.js';
import { validateLabelMap } from './meta.js';
import { isQualifiedName, isValidLabelValue } from './names.js';

/** metav1validation.ValidateLabelSelector (strict: label values in expressions must be valid). */
export function validateLabelSelector(selector: LabelSelectorObject | undefined, path: string): FieldError[] {
  if (!selector) return [];
  const errs = validateLabelMap(selector.matchLabels, `${path}.matchLabels`);
  (selector.matchExpressions ?? []).forEach((e, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0)
        errs.push(field.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0)
        errs.push(
          field.forbidden(
            `${at}.values`,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
    } else {
      errs.push(field.invalid(`${at}.operator`, e.operator, 'not a valid selector operator'));
    }
    for (const msg of isQualifiedName(e.key)) errs.push(field.invalid(`${at}.key`, e.key, msg));
    values.forEach((v, j) => {
      for (const msg of isValidLabelValue(v)) errs.push(field.invalid(`${at}.values[${j}]`, v, msg));
    });
  });
  return errs;
}
