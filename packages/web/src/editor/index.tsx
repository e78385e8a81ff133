import { forwardRef, lazy, Suspense, useRef, type RefObject } from "react";
import type { Schemas } from "../api/client";

/** Moves the cursor to an issue's place and focuses the editor. */
export interface ConfigEditorHandle {
  focusAt(line: number, column: number): void;
}

export interface ConfigEditorProps {
  /** The id of the editable element (the label's `htmlFor` and `id` pair by aria-labelledby). */
  id: string;
  /** The id of the element that names the editor (its label). */
  labelledBy: string;
  value: string;
  onChange: (value: string) => void;
  org: string;
  project: string;
  disabled?: boolean;
  invalid?: boolean;
  describedBy?: string;
  /** Issues svc answered when the config was saved: their lines are marked. */
  issues?: readonly Schemas["ErrorIssue"][];
}

/** Where a person was in the stand-in text area when the editor's code arrived: the editor takes over from there. */
export interface StandIn {
  focused: boolean;
  from: number;
  to: number;
}

// CodeMirror and the YAML mode load only on pages with a config editor (console-common.md).
const YamlEditor = lazy(() => import("./yaml-editor"));

/**
 * A YAML agent config editor: completion and hover from svc's config schema, svc's issues at their line
 * and column as you type. Until its code has loaded, a plain text area stands in, so nothing typed is lost;
 * if it had the focus, the editor takes it over with the same selection (the text area's removal would
 * otherwise drop what is typed next: seen on a loaded machine, where the code arrived between a click in
 * the text area and the keys after it).
 */
export const ConfigEditor = forwardRef<ConfigEditorHandle, ConfigEditorProps>(function ConfigEditor(props, ref) {
  const standIn = useRef<StandIn>({ focused: false, from: 0, to: 0 });
  const remember = (area: HTMLTextAreaElement, focused: boolean) => {
    standIn.current = { focused, from: area.selectionStart, to: area.selectionEnd };
  };
  const fallback = (
    <textarea
      id={props.id}
      aria-labelledby={props.labelledBy}
      value={props.value}
      spellCheck={false}
      rows={Math.max(12, props.value.split("\n").length + 1)}
      disabled={props.disabled}
      onChange={(event) => props.onChange(event.target.value)}
      onFocus={(event) => remember(event.currentTarget, true)}
      onSelect={(event) => remember(event.currentTarget, true)}
      onBlur={(event) => remember(event.currentTarget, false)}
    />
  );
  return (
    <Suspense fallback={fallback}>
      <YamlEditor ref={ref} {...props} standIn={standIn} />
    </Suspense>
  );
});

/**
 * The config's problems as svc answered them, each a button that puts the cursor at its line and column, so
 * a keyboard user lands on it. Its id is the editor's `describedBy` while there are problems.
 */
export function ConfigIssues({ issues, editor }: { issues: readonly Schemas["ErrorIssue"][]; editor: RefObject<ConfigEditorHandle | null> }) {
  if (issues.length === 0) return null;
  return (
    <ul id={CONFIG_ISSUES_ID} className="issues" aria-label="Problems in the config">
      {issues.map((issue, i) => (
        <li key={i}>
          <button type="button" className="link" onClick={() => issue.line && editor.current?.focusAt(issue.line, issue.column ?? 1)}>
            {issue.line ? `Line ${issue.line}, column ${issue.column ?? 1}` : issue.path || "Config"}
          </button>
          : {issue.message}
          {issue.path ? <span className="muted small"> ({issue.path})</span> : null}
        </li>
      ))}
    </ul>
  );
}

export const CONFIG_ISSUES_ID = "config-issues";
