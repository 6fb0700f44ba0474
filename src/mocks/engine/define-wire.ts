import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { z } from 'zod';
import { parseJsonObject } from '../../kernel/json-object.ts';
import type { MockQuery, WireRefusals } from './behaviour.ts';
import type { Outcome, TransactionWire } from './callback-plan.ts';
import type { CallbackSigner } from './callback-sender.ts';
import type { MockContext } from './mock-context.ts';
import { MockEngine, type TakeCall } from './mock-engine.ts';
import type { MockTransactionBook } from './mock-transaction-book.ts';

// A wire module, declared: its error body, its auth, its books and its operations. The engine
// owns the pipeline around them (after mountebank's): the router, the body parser, the outage
// gate, auth, zod parsing mapped to the wire's own error body, the route-not-found and internal
// error answers, persistence and lookups through the books, and every callback. What is left to
// the wire module is its upstream's tables, codes and body builders.

/** An error in the upstream's words: the wire's `errors.send` writes it. */
export interface WireError {
  status: number;
  code: string;
  message: string;
  /** More fields of the error body (an existing charge's id, the offending parameter). */
  extra?: Record<string, unknown>;
}

/** How the upstream words its errors, and which it gives for what the engine answers. */
export interface WireErrors {
  /** Writes an error body in the upstream's format. */
  send(res: Response, error: WireError): void;
  /** While the provider is marked down, before anything else. */
  outage: WireError;
  /**
   * A body the wire cannot take: no JSON object, unreadable (the body parser's 4xx, with its
   * status), or the first problem the operation's schema found (its message, the path of the
   * field, e.g. ['card', 'number'], and the body as sent, for an upstream that echoes a field of it).
   */
  invalid(
    problem:
      | { kind: 'not_an_object' }
      | { kind: 'unreadable'; status: number }
      | { kind: 'schema'; message: string; path: readonly PropertyKey[]; input: Record<string, unknown> },
  ): WireError;
  /** No operation has this method and path. */
  notFound: WireError;
  /** The mock itself failed (logged). */
  internal: WireError;
}

/** What an operation's parts are given. */
export interface WireCall<Settings, Body = unknown, Instance = unknown> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  body: Body;
  settings: Settings;
  ctx: MockContext;
  /** What this mock instance keeps besides its books (WireDefinition.instance). */
  instance: Instance;
  /** The wire's books by name: every read is one statement by key (`get`) or lookup key (`find`). */
  books: Record<string, MockTransactionBook<any>>;
  /** Settles a kept transaction now, through the engine, as its settlement job would. */
  answer<T>(book: string, reference: string, outcome: Outcome): Promise<T | undefined>;
  /** A call that keeps nothing (a name enquiry), through the engine: null when it has answered (see MockEngine.lookup). */
  lookup: MockEngine['lookup'];
  /** Answers with the wire's error body. */
  fail(error: WireError): void;
}

/** A collect or payout: the engine takes it (rules, behaviours, the book, the callback plan). */
export interface TakeOperation<Settings, Body, T> {
  method: 'post' | 'put';
  path: string;
  body: z.ZodType<Body>;
  /** The status of "accepted" (and of a malformed answer's HTML body). */
  successStatus: number;
  /**
   * The book, the upstream's reference, the rule query, the sandbox and the transaction as kept;
   * or the wire's refusal of a request its schema alone cannot judge (an unknown biller, say).
   */
  take(call: WireCall<Settings, Body, any>): TakeSpec<T> | WireError | Promise<TakeSpec<T> | WireError>;
  /** The accepted answer: its body. */
  answer(tx: T, call: WireCall<Settings, Body, any>): unknown;
}

/** What a take operation hands the engine: the engine's TakeCall, its duplicate answer as a wire error. */
export type TakeSpec<T> = Omit<TakeCall<T>, 'duplicate'> & { duplicate(existing: T | undefined): WireError };

/** A read of one kept transaction, by the upstream's reference or by another id it is indexed by. */
export interface ReadOperation<Settings, T> {
  method: 'get';
  path: string;
  book: string;
  /** The path parameter that names it, and whether it is the reference (`get`) or a lookup key (`find`). */
  param: string;
  by: 'reference' | 'lookup';
  missing(id: string): WireError;
  answer(tx: T, call: WireCall<Settings, unknown, any>): unknown;
}

/** Anything else (a sandbox action, a name enquiry): the handler answers, with the engine's books and answer. */
export interface CustomOperation<Settings, Body> {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** Parsed as for a take, when given. */
  body?: z.ZodType<Body>;
  handle(call: WireCall<Settings, Body, any>): void | Promise<void>;
}

export type WireOperation<Settings> =
  | ({ kind: 'take' } & TakeOperation<Settings, any, any>)
  | ({ kind: 'read' } & ReadOperation<Settings, any>)
  | ({ kind: 'custom' } & CustomOperation<Settings, any>);

export interface WireDefinition<Settings> {
  provider: string;
  errors: WireErrors;
  /** The refusals of scenario behaviours (reject, server_error) in the upstream's words. */
  refusals: WireRefusals;
  /** Null when the call presents the right credentials; else the error to answer. */
  auth(req: Request, settings: Settings, ctx: MockContext): WireError | null;
  /** Signs each callback, where the upstream signs them. */
  sign?(settings: Settings, ctx: MockContext): CallbackSigner;
  /** The books, how their transactions settle, and the other ids each is found by. */
  books: Record<string, { wire: TransactionWire<any>; lookupKeys?: (tx: any) => string[] }>;
  operations: readonly WireOperation<Settings>[];
  /** Largest body the upstream takes. */
  bodyLimit?: string;
  /** What one mock instance keeps besides its books (a counter, a plain book of records without callbacks). */
  instance?(ctx: MockContext, settings: Settings): unknown;
}

/** The wire's operations, typed one by one. */
export const take = <Settings, Body, T>(op: TakeOperation<Settings, Body, T>): WireOperation<Settings> => ({ kind: 'take', ...op });
export const read = <Settings, T>(op: ReadOperation<Settings, T>): WireOperation<Settings> => ({ kind: 'read', ...op });
export const custom = <Settings, Body = unknown>(op: CustomOperation<Settings, Body>): WireOperation<Settings> => ({ kind: 'custom', ...op });

/** A declared wire: the mock's factory, (ctx, settings) => the express router the engine builds. */
export function defineWire<Settings>(definition: WireDefinition<Settings>): (ctx: MockContext, settings: Settings) => Router {
  return (ctx, settings) => {
    const { errors } = definition;
    const engine = new MockEngine(ctx, {
      provider: definition.provider,
      refusals: definition.refusals,
      ...(definition.sign ? { signCallback: definition.sign(settings, ctx) } : {}),
    });
    const books = Object.fromEntries(
      Object.entries(definition.books).map(([name, b]) => [name, engine.book(name, b.wire, b.lookupKeys ? { lookupKeys: b.lookupKeys } : {})]),
    );
    const instance = definition.instance?.(ctx, settings);
    const router = express.Router();
    router.use(express.text({ type: () => true, limit: definition.bodyLimit ?? '64kb' }));
    router.use((req, res, next) => {
      if (ctx.health.isDown(definition.provider)) return errors.send(res, errors.outage);
      const refused = definition.auth(req, settings, ctx);
      if (refused) return errors.send(res, refused);
      next();
    });

    /** The body as the operation's schema reads it; undefined when the wire's error has been answered. */
    const parse = <Body>(schema: z.ZodType<Body> | undefined, req: Request, res: Response): { body: Body } | undefined => {
      if (!schema) return { body: undefined as Body };
      const json = parseJsonObject(req.body);
      if (!json) return void errors.send(res, errors.invalid({ kind: 'not_an_object' }));
      const parsed = schema.safeParse(json);
      if (parsed.success) return { body: parsed.data };
      const [first] = parsed.error.issues;
      errors.send(res, errors.invalid({ kind: 'schema', message: first?.message ?? 'invalid', path: first?.path ?? [], input: json }));
      return undefined;
    };
    const call = <Body>(req: Request, res: Response, body: Body): WireCall<Settings, Body> => ({
      req,
      res,
      params: req.params as Record<string, string>,
      body,
      settings,
      ctx,
      instance,
      books,
      answer: (book, reference, outcome) => engine.answer(book, reference, outcome),
      lookup: (exchange, query) => engine.lookup(exchange, query),
      fail: (error) => errors.send(res, error),
    });

    for (const op of definition.operations) {
      router[op.method](op.path, async (req: Request, res: Response) => {
        if (op.kind === 'read') {
          const id = (req.params as Record<string, string>)[op.param]!;
          const book = books[op.book]!;
          const tx = op.by === 'reference' ? await book.get(id) : await book.find(id);
          if (!tx) return errors.send(res, op.missing(id));
          return void res.status(200).json(op.answer(tx, call(req, res, undefined)));
        }
        const parsed = parse(op.body, req, res);
        if (!parsed) return;
        const wireCall = call(req, res, parsed.body);
        if (op.kind === 'custom') return void (await op.handle(wireCall));
        const spec = await op.take(wireCall);
        if (!('book' in spec)) return errors.send(res, spec);
        const tx = await engine.take(
          { req, res, successStatus: op.successStatus },
          { ...spec, duplicate: async () => errors.send(res, spec.duplicate(await books[spec.book]!.get(spec.reference))) },
        );
        if (tx) res.status(op.successStatus).json(op.answer(tx, wireCall));
      });
    }

    router.use((_req, res) => errors.send(res, errors.notFound));
    router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const status = (err as { status?: number }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) return errors.send(res, errors.invalid({ kind: 'unreadable', status }));
      ctx.logger.error(`${definition.provider} mock failed`, { error: String(err) });
      errors.send(res, errors.internal);
    });
    return router;
  };
}

/** The query a take asks the rules with (re-exported for wire modules). */
export type { MockQuery };
