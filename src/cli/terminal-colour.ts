// Whether text for a stream may carry ANSI colours: a terminal that is not `dumb`, unless
// NO_COLOR is set (https://no-color.org); FORCE_COLOR (anything but 0 or false) forces them on.

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * A writer for streamed text that removes ANSI codes when `colour` is false. It passes whole
 * lines only, so an escape sequence split across two chunks is still removed; `end` flushes.
 */
export function ansiFilter(write: (text: string) => void, colour: boolean): { write(chunk: string): void; end(): void } {
  if (colour) return { write, end() {} };
  let rest = '';
  return {
    write(chunk) {
      const text = rest + chunk;
      const cut = text.lastIndexOf('\n') + 1;
      rest = text.slice(cut);
      if (cut) write(stripAnsi(text.slice(0, cut)));
    },
    end() {
      if (rest) write(stripAnsi(rest));
      rest = '';
    },
  };
}
