/**
 * metav1.MicroTime's JSON decoding: Go's time.Parse with RFC3339Micro
 * (`2006-01-02T15:04:05.000000Z07:00`), which takes exactly six fractional digits. A value it
 * refuses makes the whole body undecodable (400), with Go's wording, which `parseError` renders.
 */
const LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

/** The layout's chunks in order: what each matches, as Go names it in "cannot parse X as Y". */
const CHUNKS: [string, RegExp][] = [
  ['2006', /^\d{4}/],
  ['-', /^-/],
  ['01', /^\d{2}/],
  ['-', /^-/],
  ['02', /^\d{2}/],
  ['T', /^T/],
  ['15', /^\d{2}/],
  [':', /^:/],
  ['04', /^\d{2}/],
  [':', /^:/],
  ['05', /^\d{2}/],
  ['.000000', /^\.\d{6}/],
  ['Z07:00', /^(Z|[+-]\d{2}:\d{2})/],
];

/** Go's error for a MicroTime string it cannot parse, or undefined when it parses. */
export function microTimeParseError(value: string): string | undefined {
  let rest = value;
  for (const [chunk, re] of CHUNKS) {
    const m = re.exec(rest);
    if (!m)
      return `parsing time ${JSON.stringify(value)} as ${JSON.stringify(LAYOUT)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(chunk)}`;
    rest = rest.slice(m[0].length);
  }
  if (rest) return `parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(rest)}`;
  if (Number.isNaN(Date.parse(value))) return `parsing time ${JSON.stringify(value)}: day out of range`;
  return undefined;
}

/** Marks an issue message as a time parse error, which the decoder prints bare (not as a JSON type error). */
export const TIME_PARSE_PREFIX = 'parsing time ';
