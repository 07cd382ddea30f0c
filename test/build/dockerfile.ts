/**
 * Just enough of Dockerfile and .dockerignore semantics to check, without a Docker engine, what
 * an image build would copy: instructions with their flags, and the ignore rules (last matching
 * pattern wins, `!` re-includes, a pattern matching a directory covers everything under it).
 */

export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string[];
  /** The raw argument text (JSON-array or shell form). */
  raw: string;
}

export function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const out: Instruction[] = [];
  for (const line of joined.split(/\r?\n/)) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const m = /^(\S+)\s*(.*)$/.exec(t);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    let raw = m[2] ?? '';
    const flags: Record<string, string> = {};
    for (;;) {
      const f = /^--([a-z-]+)=(\S+)\s*/.exec(raw);
      if (!f) break;
      flags[f[1]!] = f[2]!;
      raw = raw.slice(f[0].length);
    }
    const args = raw.startsWith('[') ? (JSON.parse(raw) as string[]) : raw.split(/\s+/).filter(Boolean);
    out.push({ keyword, flags, args, raw });
  }
  return out;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export type IgnoreMatcher = (path: string) => boolean;

/** A predicate: is this context-relative path left out of the build context? */
export function dockerignore(text: string): IgnoreMatcher {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).trim().replace(/^\/+|\/+$/g, '');
      return { negate, re: globToRegExp(pattern) };
    });
  return (path) => {
    const parts = path.replace(/^\/+|\/+$/g, '').split('/');
    // The path and every directory above it: a rule on a directory covers its contents.
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const rule of rules) {
      if (candidates.some((c) => rule.re.test(c))) ignored = !rule.negate;
    }
    return ignored;
  };
}
