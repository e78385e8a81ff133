CREATE TABLE "budget_notifications" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"budget_id" uuid NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"percent" integer NOT NULL,
	"spent_micro_usd" bigint NOT NULL,
	"spent_tokens" bigint NOT NULL,
	"agent_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "budget_notifications_once" UNIQUE("budget_id","period_start","percent"),
	CONSTRAINT "budget_notifications_percent" CHECK ("budget_notifications"."percent" BETWEEN 1 AND 100)
);
--> statement-breakpoint
CREATE TABLE "budgets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"scope_kind" text NOT NULL,
	"scope_id" uuid,
	"project_id" uuid,
	"period" text NOT NULL,
	"limit_micro_usd" bigint,
	"limit_tokens" bigint,
	"action" text NOT NULL,
	"notify_at_percent" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "budgets_org_id" UNIQUE("org_id","id"),
	CONSTRAINT "budgets_scope_kind" CHECK ("budgets"."scope_kind" IN ('org', 'project', 'agent_profile', 'agent', 'actor')),
	CONSTRAINT "budgets_scope_id" CHECK (("budgets"."scope_kind" = 'org') = ("budgets"."scope_id" IS NULL)),
	CONSTRAINT "budgets_period" CHECK ("budgets"."period" IN ('day', 'week', 'month', 'total')),
	CONSTRAINT "budgets_action" CHECK ("budgets"."action" IN ('pause', 'notify')),
	CONSTRAINT "budgets_limit" CHECK ("budgets"."limit_micro_usd" IS NOT NULL OR "budgets"."limit_tokens" IS NOT NULL)
);
--> statement-breakpoint
ALTER TABLE "agent_events" DROP CONSTRAINT "agent_events_payload";--> statement-breakpoint
ALTER TABLE "agent_events" ADD COLUMN "payload" jsonb;--> statement-breakpoint
ALTER TABLE "budget_notifications" ADD CONSTRAINT "budget_notifications_budget_fk" FOREIGN KEY ("org_id","budget_id") REFERENCES "public"."budgets"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_project_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "budgets_scope_idx" ON "budgets" USING btree ("org_id","scope_kind","scope_id");--> statement-breakpoint
CREATE INDEX "agent_events_budget_idx" ON "agent_events" USING btree ("agent_id","sequence") WHERE "agent_events"."event_kind" = 'budget_exceeded';--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_payload" CHECK (("agent_events"."event_kind" = 'agent_input' AND "agent_events"."agent_input_id" IS NOT NULL AND num_nonnulls("agent_events"."model_output_id", "agent_events"."tool_call_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'model_output' AND "agent_events"."model_output_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."tool_call_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'tool_result' AND "agent_events"."tool_call_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."model_output_id", "agent_events"."context_checkpoint_id") = 0)
        OR ("agent_events"."event_kind" = 'context_checkpoint' AND "agent_events"."context_checkpoint_id" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."model_output_id", "agent_events"."tool_call_id") = 0)
        OR ("agent_events"."event_kind" = 'budget_exceeded' AND "agent_events"."payload" IS NOT NULL AND num_nonnulls("agent_events"."agent_input_id", "agent_events"."model_output_id", "agent_events"."tool_call_id", "agent_events"."context_checkpoint_id") = 0));