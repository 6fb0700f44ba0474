import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from './launch.ts';

// The PostgreSQL server settings deploy/compose.yaml ships: the `-c name=value` (or `--name=value`)
// flags of its postgres service's command. The bench runs its throwaway cluster with exactly these,
// so its PostgreSQL figures are those of the deployment the repository documents.

export const COMPOSE_FILE = join(REPO_ROOT, 'deploy', 'compose.yaml');

/** The settings the postgres service passes to the server; {} when it passes none (the server's defaults). */
export function composePostgresSettings(file = COMPOSE_FILE): Record<string, string> {
  const compose = parse(readFileSync(file, 'utf8'), { merge: true }) as { services?: Record<string, { command?: string | string[] }> };
  const service = compose.services?.postgres;
  if (!service) throw new Error(`${file} has no postgres service`);
  const command = service.command ?? [];
  const words = (typeof command === 'string' ? command.trim().split(/\s+/) : command).filter(Boolean);
  if (words[0] === 'postgres') words.shift();
  const settings: Record<string, string> = {};
  const take = (pair: string | undefined) => {
    const match = /^([A-Za-z_.-]+)=(.*)$/.exec(pair ?? '');
    if (!match) throw new Error(`${file}: postgres command: expected name=value, got ${JSON.stringify(pair)}`);
    settings[match[1]!.replace(/-/g, '_')] = match[2]!;
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-c') take(words[++i]);
    else if (word.startsWith('-c')) take(word.slice(2));
    else if (word.startsWith('--')) take(word.slice(2));
    // Anything else (a port, a data directory) would change more than settings: say so rather than guess.
    else throw new Error(`${file}: postgres command: the bench cannot reproduce ${JSON.stringify(word)}`);
  }
  // The bench's cluster listens on 127.0.0.1 whatever the file says (the image listens on every address).
  delete settings.listen_addresses;
  return settings;
}
