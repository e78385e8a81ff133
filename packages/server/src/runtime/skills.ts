import type { AgentDefinition } from "./definition.js";

/**
 * What the model learns of its attached skills up front: each one's name and description, appended to
 * its instruction. The instructions themselves stay out of the context until the model loads a skill.
 */
export function skillCatalog(definition: AgentDefinition): string[] {
  // Configs compiled before skills existed have an empty list.
  if (definition.skills.length === 0) return [];
  const lines = definition.skills.map((skill) => `- ${skill.name}: ${skill.description}`);
  return [
    "## Skills\n\nThese skills are attached to you. When a task matches one's description, call the skill tool with its " +
      `name to load its full instructions before you start.\n\n${lines.join("\n")}`,
  ];
}
