CREATE TABLE "delegate_waits" (
	"tool_call_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"coordinator_agent_id" uuid NOT NULL,
	"child_agent_id" uuid NOT NULL,
	"input_id" uuid,
	"deadline" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "delegate_waits_tool_call_id_child_agent_id_pk" PRIMARY KEY("tool_call_id","child_agent_id")
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "parent_agent_id" uuid;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "root_agent_id" uuid;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "delegation_depth" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "delegate_waits" ADD CONSTRAINT "delegate_waits_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delegate_waits" ADD CONSTRAINT "delegate_waits_org_id_coordinator_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","coordinator_agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delegate_waits" ADD CONSTRAINT "delegate_waits_org_id_child_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","child_agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delegate_waits_coordinator_idx" ON "delegate_waits" USING btree ("coordinator_agent_id");--> statement-breakpoint
CREATE INDEX "delegate_waits_child_idx" ON "delegate_waits" USING btree ("child_agent_id");--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_parent_agent_fk" FOREIGN KEY ("org_id","parent_agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agents_parent_created_idx" ON "agents" USING btree ("parent_agent_id","created_at","id") WHERE "agents"."parent_agent_id" IS NOT NULL;