ALTER TABLE "agent_profiles" ADD COLUMN "description" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_profiles" ADD COLUMN "mcp_tool" boolean DEFAULT false NOT NULL;