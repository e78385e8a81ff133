CREATE TABLE "actors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"provider_tenant_id" text DEFAULT '' NOT NULL,
	"provider_user_id" text NOT NULL,
	"display_name" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"user_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "actors_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "actors_identity" UNIQUE("project_id","provider","provider_tenant_id","provider_user_id"),
	CONSTRAINT "actors_provider" CHECK ("actors"."provider" IN ('svc', 'integration', 'external'))
);
--> statement-breakpoint
CREATE TABLE "agent_configs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"source" text NOT NULL,
	"source_format" text NOT NULL,
	"source_hash" text NOT NULL,
	"compiler_version" text NOT NULL,
	"compiled_definition" jsonb NOT NULL,
	"effective_definition_hash" text NOT NULL,
	"instruction_hash" text NOT NULL,
	"configured_model_id" uuid NOT NULL,
	"configured_model_revision_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_configs_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "agent_configs_identity" UNIQUE("project_id","effective_definition_hash","source_format","source_hash"),
	CONSTRAINT "agent_configs_source_format" CHECK ("agent_configs"."source_format" IN ('yaml', 'json'))
);
--> statement-breakpoint
CREATE TABLE "agent_inputs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"state" text DEFAULT 'received' NOT NULL,
	"input_kind" text NOT NULL,
	"delivery_mode" text NOT NULL,
	"input_rank" bigint DEFAULT 0 NOT NULL,
	"actor_id" uuid,
	"control_type" text,
	"interaction_id" uuid,
	"agent_config_id" uuid,
	"idempotency_scope" text NOT NULL,
	"input_idempotency_key" text,
	"request_digest" text NOT NULL,
	"content_blocks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"queued_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"admitted_event_id" uuid,
	"resolved_at" timestamp with time zone,
	"canceled_at" timestamp with time zone,
	CONSTRAINT "agent_inputs_idempotency" UNIQUE("agent_id","idempotency_scope","input_idempotency_key"),
	CONSTRAINT "agent_inputs_state" CHECK ("agent_inputs"."state" IN ('received', 'resolved', 'rejected', 'canceled')),
	CONSTRAINT "agent_inputs_kind" CHECK ("agent_inputs"."input_kind" IN ('content', 'control', 'interaction_response', 'config_change')),
	CONSTRAINT "agent_inputs_delivery_mode" CHECK (("agent_inputs"."input_kind" = 'content' AND "agent_inputs"."delivery_mode" IN ('queued', 'steering'))
        OR ("agent_inputs"."input_kind" <> 'content' AND "agent_inputs"."delivery_mode" = 'immediate'))
);
--> statement-breakpoint
CREATE TABLE "agent_profile_versions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"agent_profile_id" uuid NOT NULL,
	"generation" integer NOT NULL,
	"agent_config_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_profile_versions_generation" UNIQUE("agent_profile_id","generation")
);
--> statement-breakpoint
CREATE TABLE "agent_profiles" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"current_config_id" uuid NOT NULL,
	"current_generation" integer DEFAULT 1 NOT NULL,
	"idempotency_key" text,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_profiles_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "agent_profiles_project_name" UNIQUE("project_id","name"),
	CONSTRAINT "agent_profiles_project_idempotency_key" UNIQUE("project_id","idempotency_key"),
	CONSTRAINT "agent_profiles_generation" CHECK ("agent_profiles"."current_generation" >= 1)
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"current_config_id" uuid NOT NULL,
	"agent_profile_id" uuid,
	"idempotency_key" text,
	"next_event_sequence" bigint DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"archived_at" timestamp with time zone,
	CONSTRAINT "agents_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "agents_project_idempotency_key" UNIQUE("project_id","idempotency_key"),
	CONSTRAINT "agents_state" CHECK (("agents"."state" = 'active' AND "agents"."archived_at" IS NULL) OR ("agents"."state" = 'archived' AND "agents"."archived_at" IS NOT NULL)),
	CONSTRAINT "agents_next_event_sequence" CHECK ("agents"."next_event_sequence" >= 1)
);
--> statement-breakpoint
CREATE TABLE "agent_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"turn_id" uuid NOT NULL,
	"sequence" bigint NOT NULL,
	"event_kind" text NOT NULL,
	"is_opening_event" boolean DEFAULT false NOT NULL,
	"agent_input_id" uuid,
	"model_output_id" uuid,
	"tool_call_id" uuid,
	"context_checkpoint_id" uuid,
	"idempotency_key" text,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_events_sequence" UNIQUE("agent_id","sequence"),
	CONSTRAINT "agent_events_idempotency_key" UNIQUE("agent_id","idempotency_key"),
	CONSTRAINT "agent_events_sequence_positive" CHECK ("agent_events"."sequence" >= 1),
	CONSTRAINT "agent_events_payload" CHECK (("agent_events"."event_kind" = 'agent_input' AND "agent_events"."agent_input_id" IS NOT NULL AND num_nonnulls("agent_events"."model_output_id", "agent_events"."tool_call_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'model_output' AND "agent_events"."model_output_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."tool_call_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'tool_result' AND "agent_events"."tool_call_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."model_output_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'context_checkpoint' AND "agent_events"."context_checkpoint_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."model_output_id", "agent_events"."tool_call_id") = 0)),
	CONSTRAINT "agent_events_opening" CHECK (NOT "agent_events"."is_opening_event" OR "agent_events"."event_kind" = 'agent_input')
);
--> statement-breakpoint
CREATE TABLE "agent_interactions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"turn_id" uuid NOT NULL,
	"tool_call_id" uuid NOT NULL,
	"interaction_kind" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"request" jsonb NOT NULL,
	"resolution" jsonb,
	"resolved_by_input_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "agent_interactions_tool_call_kind" UNIQUE("tool_call_id","interaction_kind"),
	CONSTRAINT "agent_interactions_kind" CHECK ("agent_interactions"."interaction_kind" IN ('permission', 'question')),
	CONSTRAINT "agent_interactions_state" CHECK ("agent_interactions"."state" IN ('open', 'resolved', 'canceled')),
	CONSTRAINT "agent_interactions_resolved" CHECK (("agent_interactions"."state" = 'open') = ("agent_interactions"."resolved_at" IS NULL))
);
--> statement-breakpoint
CREATE TABLE "agent_runtime_locks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"worker_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"renewed_at" timestamp with time zone NOT NULL,
	"lease_expires_at" timestamp with time zone NOT NULL,
	"cancel_requested_at" timestamp with time zone,
	CONSTRAINT "agent_runtime_locks_agent_id_unique" UNIQUE("agent_id")
);
--> statement-breakpoint
CREATE TABLE "agent_turns" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"turn_sequence" integer NOT NULL,
	"event_count" integer DEFAULT 0 NOT NULL,
	"latest_event_id" uuid,
	"latest_semantic_event_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_turns_sequence" UNIQUE("agent_id","turn_sequence"),
	CONSTRAINT "agent_turns_sequence_positive" CHECK ("agent_turns"."turn_sequence" >= 1)
);
--> statement-breakpoint
CREATE TABLE "agent_wakeups" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"ready_at" timestamp with time zone NOT NULL,
	"reason" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"content_type" text NOT NULL,
	"filename" text,
	"digest" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"storage_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "context_checkpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"model_call_context_id" uuid NOT NULL,
	"summarized_through_event_sequence" bigint NOT NULL,
	"summary" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "context_checkpoints_through" UNIQUE("agent_id","summarized_through_event_sequence")
);
--> statement-breakpoint
CREATE TABLE "model_call_contexts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"turn_id" uuid NOT NULL,
	"operation_kind" text DEFAULT 'normal' NOT NULL,
	"attempt_number" integer NOT NULL,
	"agent_config_id" uuid NOT NULL,
	"input_event_sequence" bigint NOT NULL,
	"source_event_sequence_end" bigint,
	"runtime_lock_id" uuid,
	"state" text DEFAULT 'started' NOT NULL,
	"recovery_kind" text,
	"retry_at" timestamp with time zone,
	"error_kind" text,
	"error_message" text,
	"provider_response_id" text,
	"input_tokens" integer,
	"output_tokens" integer,
	"cache_read_tokens" integer,
	"cache_write_tokens" integer,
	"reasoning_tokens" integer,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "model_call_contexts_operation" CHECK ("model_call_contexts"."operation_kind" IN ('normal', 'compaction')),
	CONSTRAINT "model_call_contexts_state" CHECK ("model_call_contexts"."state" IN ('started', 'succeeded', 'failed', 'canceled')),
	CONSTRAINT "model_call_contexts_recovery" CHECK (("model_call_contexts"."recovery_kind" IS NULL OR ("model_call_contexts"."state" = 'failed' AND "model_call_contexts"."recovery_kind" IN ('retry', 'compact')))
        AND (("model_call_contexts"."recovery_kind" = 'retry') = ("model_call_contexts"."retry_at" IS NOT NULL))),
	CONSTRAINT "model_call_contexts_attempt" CHECK ("model_call_contexts"."attempt_number" >= 1)
);
--> statement-breakpoint
CREATE TABLE "model_outputs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"model_call_context_id" uuid NOT NULL,
	"stop_reason" text NOT NULL,
	"served_model" text,
	"content_blocks" jsonb NOT NULL,
	"provider_replay" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"replay_scope" text,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "model_outputs_model_call_context_id_unique" UNIQUE("model_call_context_id"),
	CONSTRAINT "model_outputs_stop_reason" CHECK ("model_outputs"."stop_reason" IN ('end_turn', 'tool_use', 'max_tokens', 'refusal', 'content_filter', 'error'))
);
--> statement-breakpoint
CREATE TABLE "tool_call_results" (
	"tool_call_id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"outcome" text NOT NULL,
	"content_blocks" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tool_calls" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"turn_id" uuid NOT NULL,
	"model_output_id" uuid NOT NULL,
	"provider_call_id" text NOT NULL,
	"name" text NOT NULL,
	"input" jsonb NOT NULL,
	"type" text NOT NULL,
	"state" text DEFAULT 'awaiting_authorization' NOT NULL,
	"outcome" text,
	"runtime_lock_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "tool_calls_provider_call" UNIQUE("model_output_id","provider_call_id"),
	CONSTRAINT "tool_calls_type" CHECK ("tool_calls"."type" IN ('built_in', 'custom', 'mcp')),
	CONSTRAINT "tool_calls_state" CHECK ("tool_calls"."state" IN ('awaiting_authorization', 'awaiting_permission', 'ready', 'running', 'waiting', 'completed')),
	CONSTRAINT "tool_calls_completion" CHECK (("tool_calls"."state" = 'completed') = ("tool_calls"."outcome" IS NOT NULL AND "tool_calls"."completed_at" IS NOT NULL)
        AND ("tool_calls"."outcome" IS NULL OR "tool_calls"."outcome" IN ('succeeded', 'failed', 'denied', 'canceled')))
);
--> statement-breakpoint
ALTER TABLE "actors" ADD CONSTRAINT "actors_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "actors" ADD CONSTRAINT "actors_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_configs" ADD CONSTRAINT "agent_configs_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_inputs" ADD CONSTRAINT "agent_inputs_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_inputs" ADD CONSTRAINT "agent_inputs_org_id_actor_id_actors_org_id_id_fk" FOREIGN KEY ("org_id","actor_id") REFERENCES "public"."actors"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_profile_versions" ADD CONSTRAINT "agent_profile_versions_org_id_agent_profile_id_agent_profiles_org_id_id_fk" FOREIGN KEY ("org_id","agent_profile_id") REFERENCES "public"."agent_profiles"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_profile_versions" ADD CONSTRAINT "agent_profile_versions_org_id_agent_config_id_agent_configs_org_id_id_fk" FOREIGN KEY ("org_id","agent_config_id") REFERENCES "public"."agent_configs"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_profiles" ADD CONSTRAINT "agent_profiles_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_profiles" ADD CONSTRAINT "agent_profiles_org_id_current_config_id_agent_configs_org_id_id_fk" FOREIGN KEY ("org_id","current_config_id") REFERENCES "public"."agent_configs"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_org_id_current_config_id_agent_configs_org_id_id_fk" FOREIGN KEY ("org_id","current_config_id") REFERENCES "public"."agent_configs"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_agent_profile_id_agent_profiles_id_fk" FOREIGN KEY ("agent_profile_id") REFERENCES "public"."agent_profiles"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_turn_id_agent_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."agent_turns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_agent_input_id_agent_inputs_id_fk" FOREIGN KEY ("agent_input_id") REFERENCES "public"."agent_inputs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_interactions" ADD CONSTRAINT "agent_interactions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_interactions" ADD CONSTRAINT "agent_interactions_turn_id_agent_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."agent_turns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_interactions" ADD CONSTRAINT "agent_interactions_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_runtime_locks" ADD CONSTRAINT "agent_runtime_locks_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_turns" ADD CONSTRAINT "agent_turns_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_wakeups" ADD CONSTRAINT "agent_wakeups_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "context_checkpoints" ADD CONSTRAINT "context_checkpoints_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_call_contexts" ADD CONSTRAINT "model_call_contexts_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_call_contexts" ADD CONSTRAINT "model_call_contexts_turn_id_agent_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."agent_turns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_outputs" ADD CONSTRAINT "model_outputs_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_outputs" ADD CONSTRAINT "model_outputs_model_call_context_id_model_call_contexts_id_fk" FOREIGN KEY ("model_call_context_id") REFERENCES "public"."model_call_contexts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_call_results" ADD CONSTRAINT "tool_call_results_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_call_results" ADD CONSTRAINT "tool_call_results_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_turn_id_agent_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."agent_turns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_model_output_id_model_outputs_id_fk" FOREIGN KEY ("model_output_id") REFERENCES "public"."model_outputs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "actors_project_created_idx" ON "actors" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "agent_inputs_backlog_idx" ON "agent_inputs" USING btree ("agent_id","delivery_mode","input_rank","queued_at","id") WHERE "agent_inputs"."state" = 'received';--> statement-breakpoint
CREATE INDEX "agent_profiles_project_created_idx" ON "agent_profiles" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "agents_project_active_created_idx" ON "agents" USING btree ("project_id","created_at","id") WHERE "agents"."state" = 'active';--> statement-breakpoint
CREATE INDEX "agents_profile_idx" ON "agents" USING btree ("agent_profile_id");--> statement-breakpoint
CREATE INDEX "agent_events_turn_idx" ON "agent_events" USING btree ("turn_id","sequence");--> statement-breakpoint
CREATE INDEX "agent_interactions_agent_created_idx" ON "agent_interactions" USING btree ("agent_id","created_at","id");--> statement-breakpoint
CREATE INDEX "agent_runtime_locks_expiry_idx" ON "agent_runtime_locks" USING btree ("lease_expires_at");--> statement-breakpoint
CREATE INDEX "agent_wakeups_ready_idx" ON "agent_wakeups" USING btree ("ready_at");--> statement-breakpoint
CREATE INDEX "artifacts_agent_idx" ON "artifacts" USING btree ("agent_id");--> statement-breakpoint
CREATE UNIQUE INDEX "model_call_contexts_one_started" ON "model_call_contexts" USING btree ("agent_id") WHERE "model_call_contexts"."state" = 'started';--> statement-breakpoint
CREATE INDEX "model_call_contexts_turn_idx" ON "model_call_contexts" USING btree ("turn_id","created_at");--> statement-breakpoint
CREATE INDEX "tool_calls_agent_created_idx" ON "tool_calls" USING btree ("agent_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tool_calls_turn_idx" ON "tool_calls" USING btree ("turn_id");