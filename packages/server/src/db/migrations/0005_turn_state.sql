ALTER TABLE "agent_turns" ADD COLUMN "latest_prompt_sequence" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_turns" ADD COLUMN "stop_sequence" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Backfill from history: the latest cancel of each turn, then the latest prompt after it.
UPDATE "agent_turns" t SET "stop_sequence" = s.seq
FROM (
  SELECT e."turn_id", max(e."sequence") AS seq
  FROM "agent_events" e JOIN "agent_inputs" i ON i."id" = e."agent_input_id"
  WHERE i."control_type" = 'cancel_current'
  GROUP BY e."turn_id"
) s
WHERE s."turn_id" = t."id";--> statement-breakpoint
UPDATE "agent_turns" t SET "latest_prompt_sequence" = p.seq
FROM (
  SELECT e."turn_id", max(e."sequence") AS seq
  FROM "agent_events" e LEFT JOIN "agent_inputs" i ON i."id" = e."agent_input_id"
  WHERE (e."event_kind" = 'agent_input' AND i."input_kind" = 'content') OR e."event_kind" IN ('tool_result', 'context_checkpoint')
  GROUP BY e."turn_id"
) p
WHERE p."turn_id" = t."id" AND p.seq > t."stop_sequence";
--> statement-breakpoint
-- Workers cache resolved model endpoints (grant, provider settings, decrypted credential); any change
-- to what they are made of is announced on commit, so a cache can never outlive a rotation or a revoke.
CREATE FUNCTION "svc_notify_model_access"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_model_access', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "project_model_grants_model_access" AFTER INSERT OR UPDATE OR DELETE ON "project_model_grants" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_model_access"();--> statement-breakpoint
CREATE TRIGGER "model_provider_configs_model_access" AFTER INSERT OR UPDATE OR DELETE ON "model_provider_configs" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_model_access"();--> statement-breakpoint
CREATE TRIGGER "secrets_model_access" AFTER UPDATE OR DELETE ON "secrets" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_model_access"();--> statement-breakpoint
CREATE TRIGGER "secret_versions_model_access" AFTER INSERT OR UPDATE OR DELETE ON "secret_versions" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_model_access"();
