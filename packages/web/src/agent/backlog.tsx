import { closestCenter, DndContext, KeyboardSensor, PointerSensor, useSensor, useSensors, type DragEndEvent } from "@dnd-kit/core";
import { SortableContext, sortableKeyboardCoordinates, useSortable, verticalListSortingStrategy } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../query";
import { ErrorNotice, useAction } from "../ui";
import type { Ids } from "./ids";

type Input = Schemas["AgentInput"];
const BASE = "/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs/{inputID}" as const;

const textOf = (input: Input) => (input.content_blocks ?? []).map((b) => ("text" in b ? b.text : b.type)).join(" ");

/**
 * The inputs waiting for the agent, steering first. Reordered by dragging the handle (mouse, touch, or
 * the keyboard: Space picks an item up, the arrow keys move it, Space drops it, Escape cancels) or by the
 * ↑ ↓ buttons; either calls the move route. An item moves within its group (steering or queued), as the
 * route allows; Promote and Demote move it between them.
 */
export function Backlog({ ids }: { ids: Ids }) {
  // Under the agent's key: the timeline's stream invalidates it as the agent takes inputs in.
  const backlogKey = keys.agent(ids.orgID, ids.projectID, ids.agentID, "backlog");
  const backlog = useQuery({ queryKey: backlogKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs/backlog", { params: { path: ids, query: { limit: 100 } } })) });
  const action = useAction({ invalidates: [backlogKey] });
  const items = backlog.data?.data ?? [];
  const sensors = useSensors(
    // A few pixels of movement before a drag starts, so a click on the handle stays a click.
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );

  const move = (input: Input, position: "before" | "after", anchor: string) =>
    void action.run(async () => {
      await call(api.POST(`${BASE}/move`, { params: { path: { ...ids, inputID: input.id } }, body: { position, anchor_input_id: anchor } }));
    });
  const act = (input: Input, what: "cancel" | "promote" | "demote") =>
    void action.run(async () => {
      const params = { path: { ...ids, inputID: input.id } };
      if (what === "cancel") await call(api.POST(`${BASE}/cancel`, { params }));
      if (what === "promote") await call(api.POST(`${BASE}/promote_to_steering`, { params, body: { cancel_open_interactions: false } }));
      if (what === "demote") await call(api.POST(`${BASE}/demote_to_queued`, { params }));
    });

  const dropped = ({ active, over }: DragEndEvent) => {
    if (!over || active.id === over.id) return;
    const from = items.findIndex((i) => i.id === active.id);
    const to = items.findIndex((i) => i.id === over.id);
    const input = items[from];
    const anchor = items[to];
    // Across groups is a promotion or demotion, not a move: the buttons say which.
    if (!input || !anchor || input.delivery_mode !== anchor.delivery_mode) return;
    move(input, to > from ? "after" : "before", anchor.id);
  };

  return (
    <section aria-labelledby="backlog-title">
      <h2 id="backlog-title">Backlog</h2>
      <ErrorNotice error={backlog.error ?? action.error} />
      {items.length === 0 ? <p className="muted">No input waits. Messages sent while the agent works wait here.</p> : <p className="muted small" id="backlog-help">Drag a handle, or focus it and press Space, the arrow keys, then Space, to reorder.</p>}
      <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={dropped} accessibility={{ screenReaderInstructions: { draggable: "To reorder, press Space, move with the arrow keys, and press Space again to drop, or Escape to cancel." } }}>
        <SortableContext items={items.map((i) => i.id)} strategy={verticalListSortingStrategy}>
          <ol className="list backlog" aria-label="Backlog">
            {items.map((input, i) => {
              const sameMode = (other: Input | undefined) => (other && other.delivery_mode === input.delivery_mode ? other.id : undefined);
              return (
                <BacklogItem
                  key={input.id}
                  input={input}
                  previous={sameMode(items[i - 1])}
                  next={sameMode(items[i + 1])}
                  busy={action.busy}
                  move={move}
                  act={act}
                />
              );
            })}
          </ol>
        </SortableContext>
      </DndContext>
    </section>
  );
}

function BacklogItem(props: {
  input: Input;
  previous: string | undefined;
  next: string | undefined;
  busy: boolean;
  move: (input: Input, position: "before" | "after", anchor: string) => void;
  act: (input: Input, what: "cancel" | "promote" | "demote") => void;
}) {
  const { input, previous, next, busy } = props;
  const sortable = useSortable({ id: input.id });
  const text = textOf(input);
  const style = { transform: CSS.Transform.toString(sortable.transform), transition: sortable.transition };
  return (
    <li ref={sortable.setNodeRef} style={style} className={sortable.isDragging ? "dragging" : undefined} data-input-id={input.id}>
      <button type="button" className="handle secondary" {...sortable.attributes} {...sortable.listeners} aria-label={`Drag to reorder: ${text}`}>
        <span aria-hidden="true">⠿</span>
      </button>
      <span className="badge">{input.delivery_mode}</span> <span className="clip">{text}</span>
      <div className="actions small">
        <button type="button" className="secondary" disabled={busy || !previous} onClick={() => previous && props.move(input, "before", previous)} aria-label={`Move up: ${text}`}>
          ↑
        </button>
        <button type="button" className="secondary" disabled={busy || !next} onClick={() => next && props.move(input, "after", next)} aria-label={`Move down: ${text}`}>
          ↓
        </button>
        {input.delivery_mode === "queued" ? (
          <button type="button" className="secondary" disabled={busy} onClick={() => props.act(input, "promote")} aria-label={`Promote: ${text}`}>
            Promote
          </button>
        ) : (
          <button type="button" className="secondary" disabled={busy} onClick={() => props.act(input, "demote")} aria-label={`Demote: ${text}`}>
            Demote
          </button>
        )}
        <button type="button" className="secondary" disabled={busy} onClick={() => props.act(input, "cancel")} aria-label={`Cancel: ${text}`}>
          Cancel
        </button>
      </div>
    </li>
  );
}
