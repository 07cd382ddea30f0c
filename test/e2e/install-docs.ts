/**
 * The code blocks of a Markdown page, in order, each with the heading it sits under: what
 * docs/install.md tells a person to type, taken verbatim so a test can run it.
 */
export interface CodeBlock {
  heading: string;
  lang: string;
  text: string;
}

export function codeBlocks(markdown: string): CodeBlock[] {
  const out: CodeBlock[] = [];
  let heading = '';
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (/^```\s*$/.test(line)) {
        out.push({ heading, lang: open.lang, text: open.lines.join('\n') + '\n' });
        open = undefined;
      } else open.lines.push(line);
      continue;
    }
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) heading = h[1]!.trim();
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) open = { lang: fence[1] ?? '', lines: [] };
  }
  if (open) throw new Error(`unterminated code block under "${heading}"`);
  return out;
}

/** The blocks under one heading, of one language; throws when there are none (the page changed). */
export function blocksUnder(markdown: string, heading: string, lang: string): string[] {
  const found = codeBlocks(markdown)
    .filter((b) => b.heading === heading && b.lang === lang)
    .map((b) => b.text);
  if (found.length === 0) throw new Error(`no ${lang} block under "${heading}"`);
  return found;
}
