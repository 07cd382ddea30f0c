import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in README.md, src/README.md and docs/ resolves to a file or folder of the repository, so
 * the docs work in a plain clone (no link leaves the repository, none is broken).
 */

const root = resolve(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** Inline links and images `[text](target)` outside code spans and fenced blocks. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const targets: string[] = [];
  for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    targets.push(target);
  }
  return targets;
}

describe('relative links in README.md and docs/', () => {
  const files = [
    join(root, 'README.md'),
    join(root, 'src', 'README.md'),
    ...markdownFiles(join(root, 'docs')),
  ];

  it('finds the links (the parser sees them)', () => {
    expect(relativeLinks('see [a](docs/a.md), [b](https://x.y), `[c](no.md)`, [d](#top)')).toEqual([
      'docs/a.md',
    ]);
    expect(relativeLinks(readFileSync(join(root, 'README.md'), 'utf8'))).toContain('docs/design.md');
  });

  it.each(files.map((f) => [f.slice(root.length + 1), f]))(
    '%s: every relative link resolves inside the repository',
    (_name, file) => {
      const broken: string[] = [];
      for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
        const path = resolve(dirname(file), decodeURIComponent(target.split('#')[0]!));
        if (!path.startsWith(root + '/') || !existsSync(path)) broken.push(target);
      }
      expect(broken).toEqual([]);
    },
  );
});
