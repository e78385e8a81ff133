import type { Conversation, TimelineItem } from "./context.js";
import type { ModelMessage } from "./models/types.js";

/*
 * Context checkpoints (reference design-brief.md §3.9): when a conversation outgrows the model's window, older events
 * are summarized into a `context_checkpoint` and later calls see the summary plus what came after it.
 */

/** The raw tail kept after a checkpoint: a quarter of the usable window, at most 20 000 tokens. */
const TAIL_SHARE = 0.25;
const TAIL_CAP_TOKENS = 20_000;

export const SUMMARY_INSTRUCTION = [
  "You write context checkpoints for an AI agent whose conversation no longer fits its context window.",
  "Summarize the conversation so far, merging any earlier <context_checkpoint> into the new summary, so the agent can",
  "continue the task from the summary alone. Use these sections: Goal, Instructions, Progress, Relevant Artifacts, Next",
  "Steps. Keep names, identifiers, numbers, decisions and open questions exactly. Do not take new actions or call tools.",
].join(" ");

export function summaryRequestMessage(): ModelMessage {
  return { role: "user", content: "Write the context checkpoint for the conversation above now." };
}

export interface CompactionPlan {
  /** The items to summarize, oldest first; the summary covers events through `through`. */
  summarized: TimelineItem[];
  through: number;
}

/**
 * Chooses what to summarize: everything but a recent tail. Items are atomic (a tool-use output travels
 * with its results), so a tool call is never split from its results. Null when nothing can be summarized.
 */
export function planCompaction(conversation: Conversation, usableTokens: number): CompactionPlan | null {
  const tailBudget = Math.min(TAIL_CAP_TOKENS, Math.floor(usableTokens * TAIL_SHARE));
  const items = conversation.items;
  let tail = 0;
  let cut = items.length;
  while (cut > 0 && tail + items[cut - 1]!.tokens <= tailBudget) {
    cut -= 1;
    tail += items[cut]!.tokens;
  }
  // Keep at least the newest item raw: it is what the model must answer.
  cut = Math.min(cut, items.length - 1);
  if (cut <= 0) return null;
  const summarized = items.slice(0, cut);
  return { summarized, through: lastSequence(items, cut) };
}

/** The sequence just before the first kept item: the summary covers every event up to it. */
function lastSequence(items: TimelineItem[], cut: number): number {
  return items[cut]!.sequence - 1;
}
