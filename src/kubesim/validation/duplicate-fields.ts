/**
 * Duplicate keys in a JSON document, which JSON.parse silently resolves (last wins) but the
 * apiserver's strict decoder reports as `duplicate field "<path>"`, with the full path of the
 * key (`spec.type`, `metadata.labels.a`, `spec.ports[0].port`). A small scanner over the raw
 * text: it only tracks object nesting, array positions and key names, so it accepts exactly
 * what JSON.parse accepted before it runs (callers parse first).
 */
type Frame =
  | { kind: 'object'; path: string; keys: Set<string>; lastKey?: string }
  | { kind: 'array'; path: string; index: number };

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The path of a value that starts at the current position, inside `top`. */
function childPath(top: Frame | undefined): string {
  if (!top) return '';
  return top.kind === 'array' ? `${top.path}[${top.index}]` : join(top.path, top.lastKey ?? '');
}

export function findDuplicateKeys(text: string): string[] {
  const dupes: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      i = j + 1;
      if (expectKey && top?.kind === 'object') {
        const key = JSON.parse(raw) as string;
        if (top.keys.has(key)) dupes.push(join(top.path, key));
        top.keys.add(key);
        top.lastKey = key;
        expectKey = false;
      }
      continue;
    }
    if (c === '{') {
      stack.push({ kind: 'object', path: childPath(top), keys: new Set() });
      expectKey = true;
    } else if (c === '[') {
      stack.push({ kind: 'array', path: childPath(top), index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      if (top?.kind === 'array') top.index++;
      expectKey = top?.kind === 'object';
    }
    i++;
  }
  return dupes;
}
