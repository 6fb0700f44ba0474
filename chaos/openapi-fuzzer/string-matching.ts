import type { Rng } from '../seeded-random.ts';

/**
 * A string matching a simple regular expression (literals, classes, \d \w, groups,
 * alternation, ? * + {m,n}); null for anything fancier, such as lookarounds.
 */
export function stringMatching(rng: Rng, pattern: string): string | null {
  let i = 0;
  const DIGITS = '0123456789';
  const WORD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
  type Node = (out: string[]) => void;
  const fail = (): never => {
    throw new Error('unsupported');
  };
  const escaped = (): string => {
    const c = pattern[i++] ?? fail();
    return c === 'd' ? DIGITS : c === 'w' ? WORD : c === 's' ? ' ' : /[DWSbB]/.test(c) ? fail() : c;
  };
  const charClass = (): string => {
    if (pattern[i] === '^') fail();
    let set = '';
    while (pattern[i] !== ']') {
      if (i >= pattern.length) fail();
      let c = pattern[i++]!;
      if (c === '\\') {
        const e = escaped();
        if (e.length > 1) {
          set += e;
          continue;
        }
        c = e;
      }
      if (pattern[i] === '-' && pattern[i + 1] !== ']') {
        i++;
        let end = pattern[i++]!;
        if (end === '\\') end = escaped();
        for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code++) set += String.fromCharCode(code);
      } else set += c;
    }
    i++;
    return set;
  };
  const alternation = (): Node => {
    const options: Node[] = [sequence()];
    while (pattern[i] === '|') {
      i++;
      options.push(sequence());
    }
    return (out) => rng.pick(options)(out);
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      const c = pattern[i++]!;
      let atom: Node;
      if (c === '^' || c === '$') continue;
      if (c === '(') {
        if (pattern[i] === '?') {
          if (pattern[i + 1] !== ':') fail();
          i += 2;
        }
        atom = alternation();
        if (pattern[i++] !== ')') fail();
      } else if (c === '[') {
        const set = charClass();
        atom = (out) => out.push(set[rng.below(set.length)]!);
      } else if (c === '\\') {
        const set = escaped();
        atom = (out) => out.push(set[rng.below(set.length)]!);
      } else if (c === '.') {
        atom = (out) => out.push(WORD[rng.below(WORD.length)]!);
      } else {
        atom = (out) => out.push(c);
      }
      let min = 1;
      let max = 1;
      const q = pattern[i];
      if (q === '?' || q === '*' || q === '+') {
        i++;
        [min, max] = q === '?' ? [0, 1] : q === '*' ? [0, 4] : [1, 4];
      } else if (q === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i)) ?? fail();
        i += m[0].length;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] ? Number(m[3]) : min + 4;
      }
      const lo = min;
      const hi = max;
      items.push((out) => {
        const n = rng.int(lo, hi);
        for (let k = 0; k < n; k++) atom(out);
      });
    }
    return (out) => {
      for (const item of items) item(out);
    };
  };
  try {
    const root = alternation();
    if (i < pattern.length) return null;
    const out: string[] = [];
    root(out);
    return out.join('');
  } catch {
    return null;
  }
}
