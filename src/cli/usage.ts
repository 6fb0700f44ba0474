import type { ProviderDefinition } from '../providers/define-provider.ts';

/** One line per provider: its id, what it speaks, and whether `railyard record` can record it. */
function providerLines(providers: readonly ProviderDefinition[]): string {
  const width = Math.max(...providers.map((p) => p.id.length)) + 2;
  return providers.map((p) => `  ${p.id.padEnd(width)}${p.options.summary}${p.recorder ? ' (recordable)' : ''}`).join('\n');
}

/** `railyard help`: the commands, then every provider of the list. */
export function usage(version: string, providers: readonly ProviderDefinition[]): string {
  return `railyard ${version}

Usage:
  railyard serve            run the sandbox (default); configure with railyard.yaml and env (see README)
  railyard listen --forward-to <url> [--api <url>] [--key <sk_…>] [--events <type,…>] [--print-secret]
                            forward the sandbox's events to a local URL, signed (Standard Webhooks)
                            with a secret stable per key; --print-secret prints it and exits
  railyard trigger <event-type> [--api <url>] [--key <sk_test_…>] [--secret <signing secret>]
                            [--review-address <address>]
                            create the objects that emit that event (on a virtual clock, advance it)
  railyard clock advance <duration> [--api <url>] [--key <sk_test_…>]   (--base is --api)
                            move a running sandbox's virtual clock forward (90s, 15m, 24h, 1d) with a
                            progress bar of the jobs that fall due on the way
  railyard faults on <profile> [--route 'METHOD /path'] [--probability P] [--every N] [--times N] ...
  railyard faults list | railyard faults off [<id>]       [--api <url>] [--key <sk_test_…>]
                            switch faults on railyard's own API on and off in a running sandbox:
                            lost-responses, cut-connections, server-errors, slow-responses, rate-limit
  railyard replay <files or dirs...> [--reporter default|junit|json] [--output <file>] [--seed N]
                            run the scenario files' scripts, each in its own in-process sandbox on a
                            virtual clock, and check their expectations; exit 0 when all pass, 1 when
                            one fails, 2 when no file holds a script (--json: --reporter json)
  railyard contracts generate [--dir contracts] [--scenarios <dirs or files...>] [--check]
                            replay the scripted scenarios into Pact V4 files (merchant -> railyard
                            with webhook messages; railyard -> each provider below);
                            --check fails when --dir differs from a fresh generation (drift)
  railyard contracts verify [--dir contracts] [--provider <name>]... [--provider-base-url <url>]
                            [--key <sk_test_…>] [--secret <signing secret>] [--log-level <level>]
                            [--reporter default|junit|json] [--output <file>]
                            run the Pact verifier against in-process railyard (or a running one)
  railyard scenarios lint [files or dirs...] [--strict] [--reporter text|json]
                            report rules that can never match, rules shadowed by an earlier one and
                            fields that do nothing, as file:line; exit 1 on errors (--strict: on
                            warnings too), 2 when a path does not exist
  railyard mock <provider> [--port N] [--host H] [--scenarios <files or dirs...>] [--as-real-sandbox]
                            serve one provider mock (any provider below) standalone on its own port;
                            the banner shows the credentials it accepts; --as-real-sandbox (mtn-momo):
                            refuse what the real sandbox refuses and play its documented outcomes only
  railyard record --provider <name> --upstream <url> [--out scenarios/recorded-<name>.yaml]
                            [--duration <seconds>] [--proxy-port N] [--callback-origin <public url>]
                            serve railyard with that provider (one marked recordable below) behind a
                            recording proxy to <url>; on Ctrl-C (or after --duration) write what
                            it did as a scenario file
  railyard migrate          apply the migrations the store (RAILYARD_DB: a SQLite file or a postgres:// URL)
                            lacks, print its schema version and exit; serve does this on start too
  railyard help             this text

Providers (the mocks, scenario rules' provider names, railyard -> provider contracts):
${providerLines(providers)}

  --api defaults to $RAILYARD_API or http://localhost:4010, --key to $RAILYARD_KEY or the sandbox
  key, --secret to $RAILYARD_SIGNING_SECRET or the sandbox signing secret.
`;
}
