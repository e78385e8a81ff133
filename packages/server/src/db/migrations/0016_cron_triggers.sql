CREATE TABLE "cron_triggers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"target_kind" text NOT NULL,
	"agent_id" uuid,
	"agent_profile_id" uuid,
	"cron" text NOT NULL,
	"timezone" text NOT NULL,
	"message_template" text NOT NULL,
	"enabled" boolean NOT NULL,
	"next_fire_at" timestamp with time zone,
	"last_fired_at" timestamp with time zone,
	"failure_report" jsonb,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"claim_token" uuid,
	"claimed_until" timestamp with time zone,
	"idempotency_key" text,
	"request_digest" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "cron_triggers_project_idempotency_key" UNIQUE("project_id","idempotency_key"),
	CONSTRAINT "cron_triggers_target" CHECK (("cron_triggers"."target_kind" = 'agent' AND "cron_triggers"."agent_id" IS NOT NULL AND "cron_triggers"."agent_profile_id" IS NULL) OR ("cron_triggers"."target_kind" = 'profile' AND "cron_triggers"."agent_profile_id" IS NOT NULL AND "cron_triggers"."agent_id" IS NULL)),
	CONSTRAINT "cron_triggers_disabled_not_scheduled" CHECK ("cron_triggers"."enabled" OR "cron_triggers"."next_fire_at" IS NULL)
);
--> statement-breakpoint
ALTER TABLE "cron_triggers" ADD CONSTRAINT "cron_triggers_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cron_triggers" ADD CONSTRAINT "cron_triggers_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cron_triggers_project_created_idx" ON "cron_triggers" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "cron_triggers_agent_idx" ON "cron_triggers" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "cron_triggers_profile_idx" ON "cron_triggers" USING btree ("agent_profile_id");--> statement-breakpoint
CREATE INDEX "cron_triggers_due_idx" ON "cron_triggers" USING btree ("next_fire_at") WHERE "cron_triggers"."enabled";