CREATE TABLE "skill_installs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"tool_call_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"skill_id" uuid NOT NULL,
	"revision_id" uuid NOT NULL,
	"skill_name" text NOT NULL,
	"digest" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"install_path" text DEFAULT '' NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "skill_installs_state" CHECK ("skill_installs"."state" IN ('pending', 'ready', 'failed', 'timeout', 'unreachable'))
);
--> statement-breakpoint
ALTER TABLE "skill_installs" ADD CONSTRAINT "skill_installs_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_installs" ADD CONSTRAINT "skill_installs_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_installs" ADD CONSTRAINT "skill_installs_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_installs_call_idx" ON "skill_installs" USING btree ("tool_call_id");--> statement-breakpoint
CREATE INDEX "skill_installs_machine_pending_idx" ON "skill_installs" USING btree ("machine_id","created_at") WHERE "skill_installs"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "skill_installs_deadline_idx" ON "skill_installs" USING btree ("deadline_at");