/**
 * What an agent writes reaches Slack as it means it (docs/integrations.md, "What agents post"). Slack reads
 * `<…>` in message text as its control sequences: `<!channel>`, `<!here>`, `<!everyone>` and
 * `<!subteam^…>` notify whole channels and groups, `<@U…>` a person, and `<url|label>` shows a link under a
 * label that hides where it goes. Slack's own rule for literal text is to write `&`, `<` and `>` as `&amp;`,
 * `&lt;` and `&gt;`; svc does that to everything an agent posts, except the sequences the integration's
 * settings allow (`allow_mentions`, `allow_links`; both off by default), as Discord's messages go out with
 * `allowed_mentions: {parse: []}`.
 */

export interface PostingRules {
  allowMentions: boolean;
  allowLinks: boolean;
}

/** The rules an integration's settings state; anything but `true` is off. */
export function postingRules(settings: Record<string, unknown>): PostingRules {
  return { allowMentions: settings["allow_mentions"] === true, allowLinks: settings["allow_links"] === true };
}

/** Broadcasts, user groups, people and channels, each with an optional `|label`. */
const MENTION = /^(?:!(?:channel|here|everyone)|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+|#C[A-Z0-9]+)(?:\|[^|]*)?$/;
/** A web or mail link, with an optional `|label`. */
const LINK = /^(?:https?:\/\/|mailto:)[^\s|]+(?:\|[^|]*)?$/;
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** `text` with every `&`, `<` and `>` escaped, but for the `<…>` sequences `rules` allow, kept as written. */
export function escapeMrkdwn(text: string, rules: PostingRules): string {
  return text.replace(/<([^<>]*)>|[&<>]/g, (match, inner: string | undefined) => {
    if (inner !== undefined && ((rules.allowMentions && MENTION.test(inner)) || (rules.allowLinks && LINK.test(inner)))) return match;
    return match.replace(/[&<>]/g, (character) => ENTITIES[character]!);
  });
}
