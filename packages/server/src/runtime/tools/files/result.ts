/** What a file tool answers: a result value for the model, or a message saying why the call failed. */
export type FileToolResult = { value: Record<string, unknown> } | { error: string };
