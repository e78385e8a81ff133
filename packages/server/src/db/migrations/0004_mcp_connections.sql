CREATE TABLE "agent_mcp_connections" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"server_key" text NOT NULL,
	"endpoint" text NOT NULL,
	"config_hash" text NOT NULL,
	"state" text NOT NULL,
	"protocol_version" text,
	"session_id" text,
	"server_info" jsonb,
	"capabilities" jsonb,
	"tools" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"turn_id" uuid,
	"generation" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_mcp_connections_server" UNIQUE("agent_id","server_key"),
	CONSTRAINT "agent_mcp_connections_state" CHECK ("agent_mcp_connections"."state" IN ('initializing', 'ready', 'failed', 'expired')),
	CONSTRAINT "agent_mcp_connections_error" CHECK (("agent_mcp_connections"."state" = 'failed') = ("agent_mcp_connections"."error" IS NOT NULL))
);
--> statement-breakpoint
ALTER TABLE "agent_mcp_connections" ADD CONSTRAINT "agent_mcp_connections_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_mcp_connections" ADD CONSTRAINT "agent_mcp_connections_turn_id_agent_turns_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."agent_turns"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_running_owner" CHECK (("tool_calls"."state" = 'running') = ("tool_calls"."runtime_lock_id" IS NOT NULL));