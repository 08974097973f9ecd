// TypeScript declarations of `lingxi-plugin`, the LingXi plugin SDK for
// JavaScript (componentize-js). See README.md next to this file.

/** Capability wire names a manifest may declare. */
export type CapabilityName = 'projectRead' | 'projectWrite' | 'processExecution' | 'networkAccess';

/** Hook event wire names. */
export type HookEventName =
  | 'sessionStart'
  | 'sessionEnd'
  | 'agentTurnStart'
  | 'agentTurnEnd'
  | 'toolBefore'
  | 'toolAfter';

/** The capability wire names, as constants. */
export const Capability: Readonly<{
  PROJECT_READ: 'projectRead';
  PROJECT_WRITE: 'projectWrite';
  PROCESS_EXECUTION: 'processExecution';
  NETWORK_ACCESS: 'networkAccess';
}>;

/** The hook event wire names, as constants. */
export const HookEvent: Readonly<{
  SESSION_START: 'sessionStart';
  SESSION_END: 'sessionEnd';
  AGENT_TURN_START: 'agentTurnStart';
  AGENT_TURN_END: 'agentTurnEnd';
  TOOL_BEFORE: 'toolBefore';
  TOOL_AFTER: 'toolAfter';
}>;

/** Who the plugin is. Must not depend on activation: the host reads it first. */
export interface Manifest {
  /** Reverse-DNS identifier, unique among installed plugins. */
  id: string;
  /** Display name. */
  name: string;
  /** Semantic version of the plugin. */
  version: string;
  /** One-line description. */
  description: string;
  /** Author, if stated. */
  author?: string;
  /** What the plugin intends to do; a host grants only what is declared and allowed. */
  capabilities?: CapabilityName[];
  /** Oldest LingXi Core tested with (for people only). */
  minimumCoreVersion?: string;
}

/** What `definePlugin` takes. */
export interface PluginDefinition {
  /** Who the plugin is. */
  manifest: Manifest;
  /**
   * Registers tools, commands and hooks. Runs once, on `plugin.initialize` or
   * lazily on the first call; if it throws, the error goes back to the host
   * and the next request tries again (with a fresh context).
   */
  activate?(ctx: PluginContext): void | Promise<void>;
  /** Called when the host closes the session, if the plugin was active. */
  deactivate?(): void | Promise<void>;
}

/** The component's `lingxi:plugin/plugin` export (opaque to authors). */
export interface PluginExport {
  /** The manifest, without activating. */ getManifest(): unknown;
  /** `plugin.initialize`. */ initialize(request: unknown): Promise<unknown>;
  /** `tool.execute`. */ executeTool(call: unknown): Promise<string>;
  /** `command.execute`. */ executeCommand(call: unknown): Promise<unknown>;
  /** `hook.emit`. */ emitHook(payload: unknown): Promise<void>;
  /** End of session. */ deactivate(): Promise<void>;
}

/** Defines the plugin; export the result as `plugin` from app.js. */
export function definePlugin(definition: PluginDefinition): PluginExport;

/** What a tool returns: text verbatim; any other value is sent as JSON. */
export type ToolOutput = string | number | boolean | object | null | undefined;

/** A tool the model may call. */
export interface ToolDefinition {
  /** The name the model calls the tool by. */
  name: string;
  /** What the tool does, for the model. */
  description?: string;
  /** JSON Schema of the arguments: text, a builder, or an object. Default `{"type": "object", "properties": {}}`. */
  inputSchema?: string | InputSchema | object;
  /** Runs the tool on the model's raw JSON arguments text. Throw to fail the call. */
  execute(args: string, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/** A slash command the user may type. */
export interface CommandDefinition {
  /** Name without the slash. */
  name: string;
  /** Other names that run the same command. */
  aliases?: string[];
  /** What the command does. */
  description?: string;
  /** Menu group, `Plugin` by default. */
  category?: string;
  /** Hint shown after the name while typing. */
  argumentHint?: string;
  /** Runs the command with the words typed after its name; a string is a modal message. */
  execute(args: string[], ctx: CommandContext): CommandResult | string | Promise<CommandResult | string>;
}

/** A kind of background task. */
export interface TaskDefinition {
  /** The name `tasks.start` is given. */
  name: string;
  /** What a task of this kind does, for people. */
  description?: string;
  /** Runs one task to its end on its own instance; the result text (other values are sent as JSON). Throw to fail it. */
  run(input: string, ctx: TaskContext): ToolOutput | Promise<ToolOutput>;
}

/** What a task is doing, or how it ended. */
export type TaskState =
  | { readonly state: 'running'; readonly fraction?: number; readonly message?: string }
  | { readonly state: 'succeeded'; readonly result: string }
  | { readonly state: 'failed'; readonly error: string }
  | { readonly state: 'cancelled' };

/** Starts, reads and cancels the plugin's background tasks, from a call. */
export class Tasks {
  private constructor();
  /** Starts a task of a registered kind and returns its id at once; throws PluginError with the host's refusal. */
  start(kind: string, input?: string): string;
  /** The state of a task; undefined if unknown or its result expired. */
  status(id: string): TaskState | undefined;
  /** Cancels a running task: true if it was running. */
  cancel(id: string): boolean;
}

/** What a running task is handed. */
export class TaskContext {
  private constructor();
  /** The task's id. */
  readonly id: string;
  /** The plugin's logger. */
  readonly logger: Logger;
  /** The plugin's persistent storage. */
  readonly storage: Storage;
  /** The value of secret `name` the user granted (`--secret NAME`); throws a PluginError naming the flag (or the command that sets it) when there is none. The host hides the value in everything the plugin writes. */
  secret(name: string): string;
  /** Read-only view of the host's snapshot as it was when the task started. */
  readonly info: InfoHub;
  /** Reports progress (0 to 1, or undefined) and what the task is doing; it counts against the task's output budget. */
  progress(fraction: number | undefined, message: string): void;
}

/** A state in a word or a line: `running`, `done: <result>`, `failed: <error>`, `cancelled`, `unknown task`. */
export function describe(state: TaskState | undefined): string;

/** One lifecycle event delivered to hook handlers. */
export interface HookPayload {
  /** Which event happened. */
  readonly event: HookEventName;
  /** What it happened to (a session, turn or tool call id). */
  readonly subjectId: string;
  /** Free-form string pairs; Core sets `sessionID`. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Writes log lines to the host's stderr, prefixed with the plugin id. */
export class Logger {
  private constructor();
  /** Logs normal operation. */
  info(message: unknown): void;
  /** Logs something unexpected that the plugin recovered from. */
  warn(message: unknown): void;
  /** Logs a failure. */
  error(message: unknown): void;
}

/** What `activate(ctx)` registers with. */
export class PluginContext {
  private constructor();
  /** The plugin's logger. */
  readonly logger: Logger;
  /** Read-only view of the host's runtime snapshot. */
  readonly info: InfoHub;
  /** The plugin's persistent storage. */
  readonly storage: Storage;
  /** The value of secret `name` the user granted (`--secret NAME`); throws a PluginError naming the flag (or the command that sets it) when there is none. The host hides the value in everything the plugin writes. */
  secret(name: string): string;
  /** Registers a tool; the same name again replaces it (with a warning). */
  registerTool(tool: ToolDefinition): void;
  /** Registers a slash command; the same name again replaces it (with a warning). */
  registerCommand(command: CommandDefinition): void;
  /** Registers a kind of background task; the same name again replaces it (with a warning). */
  registerTask(task: TaskDefinition): void;
  /** Subscribes a handler; handlers run in registration order, failures are logged. */
  on(event: HookEventName, handler: (payload: HookPayload) => void | Promise<void>): void;
}

/** Context of one tool call (no info hub: read host state in commands). */
export class ToolContext {
  private constructor();
  /** Session the call belongs to. */
  readonly sessionId: string;
  /** Identifier of this tool call. */
  readonly toolCallId: string;
  /** The plugin's logger. */
  readonly logger: Logger;
  /** The plugin's persistent storage. */
  readonly storage: Storage;
  /** The value of secret `name` the user granted (`--secret NAME`); throws a PluginError naming the flag (or the command that sets it) when there is none. The host hides the value in everything the plugin writes. */
  secret(name: string): string;
  /** The plugin's background tasks. */
  readonly tasks: Tasks;
}

/** Context of one slash command. */
export class CommandContext {
  private constructor();
  /** Session, if the command runs inside one. */
  readonly sessionId: string | undefined;
  /** Read-only view of the host's runtime snapshot. */
  readonly info: InfoHub;
  /** The plugin's logger. */
  readonly logger: Logger;
  /** The plugin's persistent storage. */
  readonly storage: Storage;
  /** The value of secret `name` the user granted (`--secret NAME`); throws a PluginError naming the flag (or the command that sets it) when there is none. The host hides the value in everything the plugin writes. */
  secret(name: string): string;
  /** The plugin's background tasks. */
  readonly tasks: Tasks;
}

/** What a slash command returns. */
export class CommandResult {
  private constructor();
  /** `message` (shown to the user) or `prompt` (sent to the model). */
  readonly kind: 'message' | 'prompt';
  /** The text. */
  readonly text: string;
  /** Messages: `modal` or `inline`. */
  readonly presentation: 'modal' | 'inline' | undefined;
  /** Messages: the optional title. */
  readonly title: string | undefined;
  /** A message in a modal pop-up, no title. */
  static message(text: string): CommandResult;
  /** A message as an inline timeline card, no title. */
  static inline(text: string): CommandResult;
  /** A prompt for the model. */
  static prompt(text: string): CommandResult;
  /** This message with a title (a prompt is returned unchanged). */
  withTitle(title: string): CommandResult;
  /** This message shown `modal` or `inline` (a prompt is returned unchanged). */
  withPresentation(presentation: 'modal' | 'inline'): CommandResult;
}

/** An error whose message goes back to the host verbatim. */
export class PluginError extends Error {
  constructor(message: string);
}

/** A point in time since the Unix epoch. */
export interface Timestamp {
  seconds: number;
  nanoseconds: number;
}

/** The workspace section of a snapshot. */
export interface WorkspaceInfo {
  rootPath: string;
  isGitRepository: boolean;
  currentGitBranch?: string;
  dirtyFileCount?: number;
  primaryLanguages?: string[];
  coreVersion: string;
}

/** The P-Core / E-Core section (absent fields were not stated). */
export interface PeCoreInfo {
  pCoreTokens?: number;
  eCoreObjects?: number;
  eCoreReferences?: number;
  lastEvictionTrigger?: string;
  reasoningEffort?: string;
  backgroundTaskCount?: number;
}

/** One conversation turn. */
export interface TurnSummary {
  turnIndex: number;
  userPromptSnippet: string;
  assistantResponseSnippet: string;
  tokenUsage: number;
}

/** The conversation section (absent fields were not stated). */
export interface ContextStateInfo {
  activeModelId?: string;
  totalTokenUsage?: number;
  contextWindowPercentage?: number;
  isCompacted?: boolean;
  messageCount?: number;
  recentTurns?: TurnSummary[];
}

/** The performance section (absent fields were not stated). */
export interface PerformanceInfo {
  timeToFirstTokenMs?: number;
  reasoningDurationMs?: number;
  toolExecutionDurationMs?: number;
  providerLatencyAverageMs?: number;
  isRateLimited?: boolean;
}

/** The latest snapshot the host accepted. */
export interface RuntimeSnapshot {
  observedAt: Timestamp;
  ipcVersion: number;
  workspace?: WorkspaceInfo;
  peCore?: PeCoreInfo;
  contextState?: ContextStateInfo;
  performance?: PerformanceInfo;
}

/** A snapshot section the host did not publish; its message is the protocol's text. */
export class InfoUnavailable extends PluginError {
  constructor(field: string, lastSnapshot: Timestamp | undefined);
  /** Wire name of the section: workspace, peCore, contextState, performance. */
  readonly field: string;
  /** When the latest snapshot was observed, if any arrived. */
  readonly lastSnapshot: Timestamp | undefined;
}

/** Read-only view of the host's runtime snapshot; getters throw InfoUnavailable. */
export class InfoHub {
  private constructor();
  /** Root path, git state, Core version. */ workspaceInfo(): WorkspaceInfo;
  /** The P-Core / E-Core section. */ peCoreInfo(): PeCoreInfo;
  /** Model, token usage, recent turns. */ contextState(): ContextStateInfo;
  /** Latencies and rate limiting. */ performanceInfo(): PerformanceInfo;
  /** The whole latest snapshot, or undefined if none arrived. */
  snapshot(): RuntimeSnapshot | undefined;
}

/** ISO-8601 in UTC, whole seconds: `2027-01-15T08:00:00Z`. */
export function iso8601(at: { seconds: number | bigint; nanoseconds?: number }): string;

/** The annotation keywords the host enforces. */
export const keywords: Readonly<{
  PATH: 'x-lingxi-path';
  TIMEOUT_MS: 'x-lingxi-timeout-ms';
  REQUIRES_APPROVAL: 'x-lingxi-requires-approval';
  CONCURRENCY_SAFE: 'x-lingxi-concurrency-safe';
  STARTS_TASK: 'x-lingxi-starts-task';
}>;

/** The protocol's default schema text: `{"type": "object", "properties": {}}`. */
export const DEFAULT_INPUT_SCHEMA: string;

/** A tool's input schema builder (immutable); `toString()` is its JSON text. */
export class InputSchema {
  /** `{"type":"object","properties":{}}`. */
  constructor();
  /** Adds a property. */ property(name: string, property: Property): InputSchema;
  /** The properties that must be present. */ required(names: Iterable<string>): InputSchema;
  /** Refuses properties that are not listed. */ noAdditionalProperties(): InputSchema;
  /** The tool's own deadline, 1 to 86 400 000 ms. */
  timeoutMs(milliseconds: number): InputSchema;
  /** Asks the host's user to approve every call. */ requiresApproval(): InputSchema;
  /** Calls may run at the same time on several instances. */ concurrencySafe(): InputSchema;
  /** A call starts a background task and answers its handle. */ startsTask(): InputSchema;
  /** Any other top-level keyword. */ with(keyword: string, value: unknown): InputSchema;
  /** The compact JSON text (the Rust builders' text). */ toString(): string;
  /** A plain object. */ toJSON(): object;
}

/** One property of an InputSchema (immutable). */
export class Property {
  private constructor();
  /** A string. */ static string(description?: string): Property;
  /** An integer. */ static integer(description?: string): Property;
  /** A number. */ static number(description?: string): Property;
  /** `true` or `false`. */ static boolean(description?: string): Property;
  /** An array of `items`. */ static array(description: string, items: Property): Property;
  /** An object with the properties of `schema`. */ static object(description: string, schema: InputSchema): Property;
  /** A path the tool reads: checked by the host, handed over canonical and absolute. */
  readPath(): Property;
  /** A path the tool writes or creates. */
  writePath(): Property;
  /** Shortest string, in characters. */ minLength(characters: number): Property;
  /** Longest string, in characters. */ maxLength(characters: number): Property;
  /** A regular expression the string must match. */ pattern(regex: string): Property;
  /** The smallest number allowed. */ minimum(minimum: number): Property;
  /** The largest number allowed. */ maximum(maximum: number): Property;
  /** The only values allowed (JSON Schema `enum`). */
  oneOf(values: Iterable<string>): Property;
  /** Any other keyword. */ with(keyword: string, value: unknown): Property;
  /** The property's JSON text. */ toString(): string;
  /** A plain object. */ toJSON(): object;
}

/** Longest storage key, in bytes of UTF-8. */
export const MAX_KEY_BYTES: 80;

/** Why a storage operation failed (texts as in the Rust SDK). */
export class StorageError extends PluginError {
  /** What failed. */ readonly kind: 'unavailable' | 'invalid-key' | 'io';
  /** The file error, for `io`. */ readonly cause: unknown;
}

/** Key-value storage in the plugin's data directory (`<dir>/kv/<encoded key>`). */
export class Storage {
  private constructor();
  /** The data directory (`/lingxi/data`), for raw files with `fs`. */
  dir(): string;
  /** The stored bytes, or undefined. */ get(key: string): Uint8Array | undefined;
  /** The stored text (invalid UTF-8 replaced), or undefined. */ getString(key: string): string | undefined;
  /** The stored JSON value, or undefined. */ getJson(key: string): unknown;
  /** Stores a value, atomically. */ set(key: string, value: string | Uint8Array): void;
  /** Stores a value as JSON. */ setJson(key: string, value: unknown): void;
  /** Whether the key existed. */
  remove(key: string): boolean;
  /** Every key, sorted. */
  keys(): string[];
}

/** A failed file operation, with a Node.js-style code (`ENOENT`, `ENOTCAPABLE`…). */
export class FsError extends PluginError {
  /** `ENOENT`, `EACCES`, `EROFS`, `ENOTCAPABLE`… */ readonly code: string;
  /** The operation: `open`, `stat`, `rename`… */ readonly syscall: string;
  /** The path as given. */ readonly path: string;
}

/** Synchronous file access inside the directories the host mounted. */
export interface FileSystem {
  /** The mounted directories, as absolute paths. */
  roots(): string[];
  /** The file's bytes. */ readFile(path: string): Uint8Array;
  /** The file's text (UTF-8, invalid bytes replaced). */ readTextFile(path: string): string;
  /** Creates or replaces a file (a string is written as UTF-8). */ writeFile(path: string, data: string | Uint8Array): void;
  /** The names in a directory. */ readDir(path: string): string[];
  /** Type (`regular-file`, `directory`…), size, modification time. */
  stat(path: string): { type: string; size: number; modified: Date | undefined };
  /** Whether the path exists (and is inside a mount). */ exists(path: string): boolean;
  /** Creates a directory (with parents if recursive). */ mkdir(path: string, options?: { recursive?: boolean }): void;
  /** Removes a file. */ unlink(path: string): void;
  /** Removes an empty directory. */ rmdir(path: string): void;
  /** Renames (moves) a file or directory. */ rename(from: string, to: string): void;
}

/** The plugin's file system (wasi:filesystem). */
export const fs: FileSystem;
/** The plugin's logger, usable anywhere. */
export const logger: Logger;
/** The plugin's storage, usable anywhere. */
export const storage: Storage;
/** The environment variables the host passes (`--env`). */
export function environment(): Record<string, string>;

/** Version of this SDK (`0.1.0`). */
export const SDK_VERSION: string;
/** IPC versions this SDK speaks (`[1]`). */
export const SUPPORTED_IPC_VERSIONS: readonly number[];
