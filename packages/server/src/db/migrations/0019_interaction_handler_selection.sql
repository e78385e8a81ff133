CREATE TABLE "agent_handler_selections" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"integration_id" uuid,
	"auto_select" boolean NOT NULL,
	"set_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_handler_selections" ADD CONSTRAINT "agent_handler_selections_org_id_agent_id_agents_org_id_id_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE cascade ON UPDATE no action;