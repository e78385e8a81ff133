CREATE TABLE "usage_scope_daily" (
	"org_id" uuid NOT NULL,
	"scope_kind" text NOT NULL,
	"scope_id" uuid NOT NULL,
	"day" date NOT NULL,
	"shard" smallint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cost_micro_usd" bigint NOT NULL,
	CONSTRAINT "usage_scope_daily_pkey" PRIMARY KEY("org_id","scope_kind","scope_id","day","shard")
);
--> statement-breakpoint
ALTER TABLE "usage_scope_daily" ADD CONSTRAINT "usage_scope_daily_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Usage recorded before this rollup existed, carried into it (in shard 0) so that budgets already in force keep their spend.
INSERT INTO "usage_scope_daily" ("org_id", "scope_kind", "scope_id", "day", "shard", "input_tokens", "output_tokens", "cost_micro_usd")
SELECT u."org_id", s."kind", s."id", u."day", 0, sum(u."input_tokens"), sum(u."output_tokens"), sum(u."cost_micro_usd")
FROM "usage_daily" u
CROSS JOIN LATERAL (VALUES ('org', u."org_id"), ('project', u."project_id"), ('agent_profile', u."agent_profile_id"), ('agent', u."agent_id"), ('actor', u."actor_id")) AS s("kind", "id")
WHERE s."id" IS NOT NULL
GROUP BY u."org_id", s."kind", s."id", u."day";
