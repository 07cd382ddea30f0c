/**
 * The identifier rules of k8s.io/apimachinery/pkg/util/validation, returning the same message
 * strings (including their quirks, like the double space in RegexError's example list).
 */

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const full = (fmt: string) => new RegExp(`^${fmt}$`);
const DNS1123_LABEL_RE = full(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = full(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = full(DNS1035_LABEL_FMT);
const QUALIFIED_NAME_RE = full(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = full(LABEL_VALUE_FMT);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** Label and annotation keys: optional DNS-1123 subdomain prefix, a slash, then a name part. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      regexError(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_FMT,
        'MyName',
        'my.name',
        '123-abc',
      ) + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  // An empty name fails both checks, as in Go.
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(
      regexError(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_FMT,
        'MyName',
        'my.name',
        '123-abc',
      ),
    );
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** IANA_SVC_NAME (RFC 6335), the rule for named target ports. */
export function isValidPortName(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(value))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens');
  if (value.length > 0 && !/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.startsWith('-') || value.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : ['must be between 1 and 65535, inclusive'];
}

/** path.ValidatePathSegmentName: the name rule of RBAC objects (anything usable in a URL path). */
export function isPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  for (const c of ['/', '%']) if (value.includes(c)) return [`may not contain '${c}'`];
  return [];
}
