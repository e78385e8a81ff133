import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, RelativeTime } from "../ui";
import { DeleteButton, Shown, Table, text } from "../widgets";

/*
 * The organization's webhook endpoints (docs/webhooks.md): create one (its signing secret is shown once),
 * rotate the secret, send a test, and see an endpoint's deliveries with their status, redelivering any.
 */

type Endpoint = Schemas["WebhookEndpoint"];
/** The endpoints' key; each endpoint's deliveries sit under it, so a change to an endpoint reads them again too. */
const endpointsKey = (org: string, ...under: unknown[]) => keys.org(org, "webhook-endpoints", ...under);
const EVENT_TYPES: Array<Schemas["WebhookEventType"]> = ["agent.waiting", "agent.idle", "agent.failed", "budget.warning", "budget.exceeded", "integration.failed", "machine.offline"];

export function WebhookEndpoints({ org }: { org: string }) {
  const invalidate = useInvalidate();
  const list = useQuery({
    queryKey: endpointsKey(org),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/webhook-endpoints", { params: { path: { orgID: org }, query: { limit: 100 } } }))).data,
  });
  const [secret, setSecret] = useState<{ endpoint: string; value: string }>();
  const [open, setOpen] = useState<string>();
  const refresh = () => invalidate(endpointsKey(org));
  const path = (endpointID: string) => ({ params: { path: { orgID: org, endpointID } } });
  const rotate = useMutation({
    mutationFn: (e: Endpoint) => call(api.POST("/api/v1/orgs/{orgID}/webhook-endpoints/{endpointID}/rotate-secret", path(e.id))),
    onSuccess: (rotated) => {
      setSecret({ endpoint: rotated.url, value: rotated.secret });
      return refresh();
    },
  });
  const test = useMutation({
    mutationFn: (e: Endpoint) => call(api.POST("/api/v1/orgs/{orgID}/webhook-endpoints/{endpointID}/test", path(e.id))),
    onSuccess: (_, e) => {
      setOpen(e.id);
      return invalidate(endpointsKey(org, e.id, "deliveries"));
    },
  });
  return (
    <Page title="Webhook endpoints">
      <p className="muted">
        svc POSTs each event to your URL, signed per Standard Webhooks (verify it with the SDK{"'"}s verifyWebhook), and retries failed deliveries with backoff.
      </p>
      <ErrorNotice error={list.error ?? rotate.error ?? test.error} />
      {secret ? <Shown label={`Signing secret for ${secret.endpoint}: shown only now. Keep it where your receiver reads it.`} value={secret.value} copyLabel="Copy the signing secret" /> : null}
      <Table
        label="Webhook endpoints"
        head={["URL", "Events", "State", "Created", ""]}
        empty="No endpoints yet. Add one below to be told when an agent needs a person."
        rows={(list.data ?? []).map((e) => [
          <span>
            {e.url}
            {e.description ? <span className="small muted"> · {e.description}</span> : null}
          </span>,
          e.event_types.length === 0 ? "all" : e.event_types.join(", "),
          e.disabled ? `disabled${e.disabled_reason ? `: ${e.disabled_reason}` : ""}` : "enabled",
          <RelativeTime at={e.created_at} />,
          <span className="flex flex-wrap gap-2">
            <button type="button" className="secondary small-button" aria-label={`Send a test to ${e.url}`} disabled={test.isPending} onClick={() => test.mutate(e)}>
              Test
            </button>
            <button type="button" className="secondary small-button" aria-label={`Rotate the secret of ${e.url}`} disabled={rotate.isPending} onClick={() => rotate.mutate(e)}>
              Rotate secret
            </button>
            <button type="button" className="secondary small-button" aria-expanded={open === e.id} aria-label={`Deliveries to ${e.url}`} onClick={() => setOpen(open === e.id ? undefined : e.id)}>
              Deliveries
            </button>
            <DeleteButton
              label={`Delete endpoint ${e.url}`}
              name={e.url}
              remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/webhook-endpoints/{endpointID}", path(e.id)))}
              removed={() => void refresh()}
            />
          </span>,
        ])}
      />
      {open && list.data?.some((e) => e.id === open) ? <Deliveries org={org} endpoint={list.data.find((e) => e.id === open)!} /> : null}
      <CreateEndpoint
        org={org}
        created={(made) => {
          setSecret({ endpoint: made.url, value: made.secret });
          return refresh();
        }}
      />
    </Page>
  );
}

function Deliveries({ org, endpoint }: { org: string; endpoint: Endpoint }) {
  const invalidate = useInvalidate();
  const key = endpointsKey(org, endpoint.id, "deliveries");
  const list = useQuery({
    queryKey: key,
    queryFn: async () =>
      (await call(api.GET("/api/v1/orgs/{orgID}/webhook-endpoints/{endpointID}/deliveries", { params: { path: { orgID: org, endpointID: endpoint.id }, query: { limit: 50 } } }))).data,
    // Pending deliveries move on by themselves: look again while any is pending.
    refetchInterval: (query) => (query.state.data?.some((d) => d.status === "pending") ? 2_000 : false),
  });
  const redeliver = useMutation({
    mutationFn: (deliveryID: string) =>
      call(api.POST("/api/v1/orgs/{orgID}/webhook-endpoints/{endpointID}/deliveries/{deliveryID}/redeliver", { params: { path: { orgID: org, endpointID: endpoint.id, deliveryID } } })),
    onSuccess: () => invalidate(key),
  });
  return (
    <section className="card" aria-label={`Deliveries to ${endpoint.url}`}>
      <h2>Deliveries to {endpoint.url}</h2>
      <ErrorNotice error={list.error ?? redeliver.error} />
      <Table
        label="Deliveries"
        head={["Event", "Status", "Attempts", "Last answer", "Next attempt", "Created", ""]}
        empty="Nothing sent to this endpoint yet."
        rows={(list.data ?? []).map((d) => [
          d.event_type,
          <span data-status={d.status}>{d.status}</span>,
          String(d.attempts),
          d.last_error ?? (d.last_status_code !== null ? String(d.last_status_code) : ""),
          d.next_attempt_at ? <RelativeTime at={d.next_attempt_at} /> : "",
          <RelativeTime at={d.created_at} />,
          <button type="button" className="secondary small-button" aria-label={`Redeliver ${d.event_type} ${d.id}`} disabled={redeliver.isPending} onClick={() => redeliver.mutate(d.id)}>
            Redeliver
          </button>,
        ])}
      />
    </section>
  );
}

function CreateEndpoint({ org, created }: { org: string; created: (endpoint: Schemas["WebhookEndpointWithSecret"]) => Promise<void> }) {
  const create = useMutation({
    mutationFn: (body: Schemas["CreateWebhookEndpointRequest"]) => call(api.POST("/api/v1/orgs/{orgID}/webhook-endpoints", { params: { path: { orgID: org } }, body })),
    onSuccess: created,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const description = text(form, "description");
    create.mutate(
      { url: text(form, "url"), event_types: form.getAll("event_types").map(String) as Array<Schemas["WebhookEventType"]>, ...(description ? { description } : {}) },
      { onSuccess: () => formElement.reset() },
    );
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Add a webhook endpoint">
      <h2>Add an endpoint</h2>
      <Field label="URL" id="webhook-url" hint="https; plain http only to private addresses when the server allows it (development).">
        <input id="webhook-url" name="url" type="url" required />
      </Field>
      <Field label="Description" id="webhook-description">
        <input id="webhook-description" name="description" />
      </Field>
      <fieldset>
        <legend>Events (none checked: all)</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} className="mr-3 inline-flex items-center gap-1">
            <input type="checkbox" name="event_types" value={type} /> {type}
          </label>
        ))}
      </fieldset>
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.isPending}>
        Add endpoint
      </button>
    </form>
  );
}
