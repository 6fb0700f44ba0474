import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The docs a newcomer walks: README.md and docs/**/*.md. Every relative link and image must name
// a file (or folder) of the checkout, and a `#anchor` into a markdown file must name one of its
// headings, as GitHub renders them.

const ROOT = resolve(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code spans: links and headings there are prose. */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      lines.push('');
      continue;
    }
    if (marker) {
      fence = marker;
      lines.push('');
      continue;
    }
    lines.push(line.replace(/(`+)[^`]*?\1/g, ''));
  }
  return lines;
}

/** GitHub's heading anchor: the rendered text, lower-cased, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*+/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file: one per heading (repeats get -1, -2, ...), plus explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && line.trim() === marker) fence = null;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** Each link or image target in the prose of a markdown text, with its line number. */
function linksOf(markdown: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  prose(markdown).forEach((text, i) => {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ line: i + 1, target: m[1]! });
    for (const m of text.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"/g)) found.push({ line: i + 1, target: m[1]! });
  });
  return found;
}

/** The broken relative links of one markdown file, as `file:line -> target (why)`. */
function brokenLinks(file: string, readMarkdown: (path: string) => string = (p) => readFileSync(p, 'utf8')): string[] {
  const broken: string[] = [];
  const name = relative(ROOT, file);
  for (const { line, target } of linksOf(readMarkdown(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute URLs
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const path = pathPart === '' ? file : pathPart.startsWith('/') ? join(ROOT, pathPart) : resolve(dirname(file), pathPart);
    const where = `${name}:${line} -> ${target}`;
    if (pathPart !== '' && !existsSync(path)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === null || !path.endsWith('.md') || (pathPart !== '' && statSync(path).isDirectory())) continue;
    if (!anchorsOf(readMarkdown(path)).has(anchor)) broken.push(`${where} (no heading #${anchor} in ${relative(ROOT, path)})`);
  }
  return broken;
}

const docs = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('the link checker', () => {
  it('slugs headings as GitHub does', () => {
    expect(githubSlug('`railyard listen` and `railyard trigger`')).toBe('railyard-listen-and-railyard-trigger');
    expect(githubSlug('Verifying: `npm run contracts:verify`')).toBe('verifying-npm-run-contractsverify');
    expect(githubSlug('Restarts, crashes and retries')).toBe('restarts-crashes-and-retries');
    expect(githubSlug('Decisions where the spec says "not shown"')).toBe('decisions-where-the-spec-says-not-shown');
    expect(githubSlug("The page's public endpoints")).toBe('the-pages-public-endpoints');
    expect(githubSlug('Bills: `POST /v1/bills`')).toBe('bills-post-v1bills');
    expect(githubSlug('fee_revenue and the [ledger](x.md)')).toBe('fee_revenue-and-the-ledger');
  });

  it('numbers repeated headings and ignores headings inside code blocks', () => {
    const anchors = anchorsOf('# Events\n\n```sh\n# not a heading\n```\n\n## Events\n### Test cards\n');
    expect([...anchors]).toEqual(['events', 'events-1', 'test-cards']);
  });

  it('reads links and images outside code, and skips those in code', () => {
    const links = linksOf('See [a](a.md#x) and ![b](img/b.png "title").\n`[c](c.md)`\n```\n[d](d.md)\n```\n<img src="e.png">');
    expect(links.map((l) => l.target)).toEqual(['a.md#x', 'img/b.png', 'e.png']);
  });

  it('reports a missing file and a missing heading, and passes a good link', () => {
    const texts: Record<string, string> = {
      [join(ROOT, 'docs/probe.md')]: '[gone](gone.md) [bad](../README.md#no-such-heading) [good](../README.md#two-commands) [self](#probe)\n# Probe\n',
      [join(ROOT, 'README.md')]: '# railyard\n## Two commands\n',
    };
    expect(brokenLinks(join(ROOT, 'docs/probe.md'), (p) => texts[p] ?? readFileSync(p, 'utf8'))).toEqual([
      'docs/probe.md:1 -> gone.md (no such file)',
      'docs/probe.md:1 -> ../README.md#no-such-heading (no heading #no-such-heading in README.md)',
    ]);
  });
});

describe('README.md and docs/', () => {
  it('are all checked (README.md and the guides under docs/)', () => {
    expect(docs.map((d) => relative(ROOT, d))).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/v1/README.md']));
  });

  it.each(docs.map((d) => [relative(ROOT, d), d]))('%s: every relative link and image resolves', (_name, file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('README.md stays short enough to read (under 250 lines) and links to docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.trimEnd().split('\n').length).toBeLessThan(250);
    expect(linksOf(readme).filter((l) => l.target.startsWith('docs/')).length).toBeGreaterThan(5);
  });
});
