import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { yaml } from "@codemirror/lang-yaml";
import { linter, lintGutter, type Diagnostic } from "@codemirror/lint";
import { Compartment, EditorState, RangeSet, StateEffect, StateField, type Text } from "@codemirror/state";
import { EditorView, gutterLineClass, GutterMarker, hoverTooltip } from "@codemirror/view";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { basicSetup } from "codemirror";
import { forwardRef, useEffect, useImperativeHandle, useRef, useState, type RefObject } from "react";
import { api, call, type Schemas } from "../api/client";
import type { ConfigEditorHandle, ConfigEditorProps, StandIn } from "./index";
import { contextAt, keyPathAt, schemaAt, suggest, type JsonSchema } from "./schema-path";

type Issue = Schemas["ErrorIssue"];

/** After this pause in typing, svc checks the config (POST …/agent-configs/validate). */
const CHECK_DELAY_MS = 400;

/** The project's config schema, fetched once per project per page load. */
const schemas = new Map<string, Promise<JsonSchema>>();
function schemaOf(org: string, project: string): Promise<JsonSchema> {
  const key = `${org}/${project}`;
  let found = schemas.get(key);
  if (!found) {
    found = call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs/schema", { params: { path: { orgID: org, projectID: project } } })) as Promise<JsonSchema>;
    found.catch(() => schemas.delete(key));
    schemas.set(key, found);
  }
  return found;
}

/** An issue's place in the text: its line and column, else the whole first line. */
function rangeOf(doc: Text, issue: Issue): { from: number; to: number } {
  if (!issue.line || issue.line > doc.lines) return { from: 0, to: Math.min(doc.length, doc.line(1).to) };
  const line = doc.line(issue.line);
  const from = Math.min(line.to, line.from + Math.max(0, (issue.column ?? 1) - 1));
  // Underline the word (or the rest of the token) that starts there.
  const word = /^[^\s:,{}[\]]+/.exec(doc.sliceString(from, line.to))?.[0].length ?? 0;
  return { from, to: Math.max(from + word, Math.min(line.to, from + 1)) };
}

/** Lines whose gutter number is marked: the issues of the last check, for the eye (the lint markers say it too). */
const setMarked = StateEffect.define<number[]>();
const markedLine = new (class extends GutterMarker {
  override elementClass = "marked";
})();
const markedLines = StateField.define<RangeSet<GutterMarker>>({
  create: () => RangeSet.empty,
  update(set, tr) {
    for (const effect of tr.effects) {
      if (effect.is(setMarked)) {
        const lines = [...new Set(effect.value)].filter((n) => n >= 1 && n <= tr.state.doc.lines).sort((a, b) => a - b);
        return RangeSet.of(lines.map((n) => markedLine.range(tr.state.doc.line(n).from)));
      }
    }
    return set.map(tr.changes);
  },
  provide: (field) => gutterLineClass.from(field),
});

/**
 * Token colours from the console's theme variables, so keys, strings and comments keep AA contrast in the
 * light and the dark scheme (CodeMirror's default colours are for light backgrounds only).
 */
const highlight = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: "var(--accent)" },
  { tag: [tags.string, tags.special(tags.string), tags.content], color: "var(--fg)" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom, tags.keyword], color: "var(--ok)" },
  { tag: [tags.comment, tags.lineComment, tags.meta], color: "var(--muted)", fontStyle: "italic" },
  { tag: [tags.punctuation, tags.separator, tags.squareBracket, tags.brace], color: "var(--muted)" },
  { tag: tags.invalid, color: "var(--danger)" },
]);

const theme = EditorView.theme({
  "&": { border: "1px solid var(--line)", borderRadius: "6px", background: "var(--bg)", color: "var(--fg)", fontSize: "0.92rem" },
  "&.cm-focused": { outline: "3px solid var(--accent)", outlineOffset: "2px" },
  ".cm-content": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", caretColor: "var(--fg)", minHeight: "12em" },
  ".cm-gutters": { background: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
  ".cm-gutterElement.marked": { color: "var(--danger)", fontWeight: "700" },
  ".cm-activeLine, .cm-activeLineGutter": { background: "color-mix(in srgb, var(--accent) 8%, transparent)" },
  ".cm-tooltip": { background: "var(--bg)", color: "var(--fg)", border: "1px solid var(--line)", maxWidth: "min(36em, 90vw)" },
  ".cm-tooltip-hover, .cm-tooltip-lint": { padding: "4px 8px" },
  ".cm-completionInfo": { maxWidth: "min(30em, 80vw)" },
});

/**
 * CodeMirror makes its styles at run time, as style elements: the console's CSP admits them with the page's
 * nonce, which svc writes into a csp-nonce meta on every load (platform/http/console.ts).
 */
function pageNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? "";
}

/**
 * CodeMirror 6 over YAML: completion and hover from svc's config schema, and svc's own validation (the
 * same checks as saving) shown at each issue's line and column while the author types.
 */
const YamlEditor = forwardRef<ConfigEditorHandle, ConfigEditorProps & { standIn: RefObject<StandIn> }>(function YamlEditor(props, ref) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const [checked, setChecked] = useState<{ issues: Issue[]; failed?: string } | undefined>();
  const editable = useRef(new Compartment());

  useImperativeHandle(ref, () => ({
    focusAt(line: number, column: number) {
      const v = view.current;
      if (!v) return;
      const at = rangeOf(v.state.doc, { path: "", message: "", line, column }).from;
      v.dispatch({ selection: { anchor: at }, scrollIntoView: true });
      v.focus();
    },
  }));

  useEffect(() => {
    const { org, project } = latest.current;
    const schema: { current?: JsonSchema } = {};
    void schemaOf(org, project).then((s) => (schema.current = s), () => undefined);

    const complete = (context: CompletionContext): CompletionResult | null => {
      if (!schema.current) return null;
      const line = context.state.doc.lineAt(context.pos);
      const lines = context.state.doc.toString().split("\n");
      const where = contextAt(lines, line.number - 1, context.pos - line.from);
      if (!where) return null;
      const word = context.pos - line.from - where.wordStart;
      if (word === 0 && !context.explicit && where.kind === "key") return null;
      const options = suggest(schema.current, where).map((s) => ({ label: s.label, apply: s.apply, type: where.kind === "key" ? "property" : "enum", ...(s.detail ? { detail: s.detail } : {}), ...(s.info ? { info: s.info } : {}) }));
      return options.length ? { from: line.from + where.wordStart, options, validFor: /^[A-Za-z0-9_-]*$/ } : null;
    };

    const hover = hoverTooltip((v, pos) => {
      if (!schema.current) return null;
      const line = v.state.doc.lineAt(pos);
      const lines = v.state.doc.toString().split("\n");
      const path = keyPathAt(lines, line.number - 1);
      if (!path) return null;
      const key = path.at(-1)!;
      const start = line.text.indexOf(key);
      if (start < 0 || pos < line.from + start || pos > line.from + start + key.length) return null;
      const description = schemaAt(schema.current, path)?.description;
      if (!description) return null;
      return {
        pos: line.from + start,
        end: line.from + start + key.length,
        above: true,
        create: () => {
          const dom = document.createElement("div");
          dom.className = "cm-schema-hover";
          const name = document.createElement("strong");
          name.textContent = key;
          dom.append(name, ": ", description);
          return { dom };
        },
      };
    });

    const check = linter(
      async (v): Promise<Diagnostic[]> => {
        const source = v.state.doc.toString();
        if (!source.trim()) return [];
        try {
          const result = await call(
            api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs/validate", {
              params: { path: { orgID: org, projectID: project } },
              body: { source, source_format: "yaml" },
            }),
          );
          // The text may have changed while svc checked it: the linter asks again after the next pause.
          if (v.state.doc.toString() !== source) return [];
          setChecked({ issues: result.issues });
          v.dispatch({ effects: setMarked.of(result.issues.flatMap((i) => (i.line ? [i.line] : []))) });
          return result.issues.map((issue) => ({ ...rangeOf(v.state.doc, issue), severity: "error", message: issue.path ? `${issue.message} (${issue.path})` : issue.message, source: "svc" }));
        } catch (err) {
          setChecked({ issues: [], failed: err instanceof Error ? err.message : String(err) });
          return [];
        }
      },
      { delay: CHECK_DELAY_MS },
    );

    const labelled = latest.current.labelledBy;
    const described = latest.current.describedBy;
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: latest.current.value,
        extensions: [
          EditorView.cspNonce.of(pageNonce()),
          basicSetup,
          syntaxHighlighting(highlight),
          yaml(),
          markedLines,
          lintGutter(),
          check,
          autocompletion({ override: [complete], activateOnTyping: true }),
          hover,
          theme,
          EditorState.tabSize.of(2),
          editable.current.of(EditorView.editable.of(!latest.current.disabled)),
          EditorView.contentAttributes.of({
            id: latest.current.id,
            "aria-labelledby": labelled,
            "aria-multiline": "true",
            ...(described ? { "aria-describedby": `${described} ${latest.current.id}-checked` } : { "aria-describedby": `${latest.current.id}-checked` }),
          }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    // The stand-in text area had the focus: carry on where the person was.
    const handOff = latest.current.standIn.current;
    if (handOff.focused) {
      const end = v.state.doc.length;
      v.dispatch({ selection: { anchor: Math.min(handOff.from, end), head: Math.min(handOff.to, end) } });
      v.focus();
    }
    return () => {
      v.destroy();
      view.current = null;
    };
    // One editor per mount; the value and disabled flag are synced below.
  }, []);

  // A value set from outside (the starter, once the project's model is known) replaces the text.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== props.value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: props.value } });
  }, [props.value]);
  useEffect(() => {
    view.current?.dispatch({ effects: editable.current.reconfigure(EditorView.editable.of(!props.disabled)) });
  }, [props.disabled]);
  // Issues svc answered on saving are marked the same way.
  useEffect(() => {
    if (props.issues?.length) view.current?.dispatch({ effects: setMarked.of(props.issues.flatMap((i) => (i.line ? [i.line] : []))) });
  }, [props.issues]);

  const count = checked?.issues.length ?? 0;
  return (
    <div className="config-editor">
      <div ref={host} aria-invalid={props.invalid || count > 0 ? true : undefined} />
      <p id={`${props.id}-checked`} className={`small ${count ? "error" : "muted"}`} role="status">
        {checked === undefined
          ? "svc checks the config as you type."
          : checked.failed
            ? `Could not check the config: ${checked.failed}`
            : count === 0
              ? "svc finds no problem in this config."
              : `${count === 1 ? "1 problem" : `${count} problems`}: ${checked.issues
                  .slice(0, 3)
                  .map((i) => (i.line ? `line ${i.line}: ${i.message}` : i.message))
                  .join("; ")}${count > 3 ? "; …" : ""}`}
      </p>
    </div>
  );
});

export default YamlEditor;
