/** The 16 bytes of an IPv6 address (which `isIP` already accepted), dotted-quad tails included. */
export function ipv6Bytes(address: string): number[] | null {
  let text = address.toLowerCase().split("%")[0]!;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted[1]!.split(".").map(Number));
    text = text.slice(0, -dotted[1]!.length) + "0:0";
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const fill = rest === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(fill).fill("0"), ...right];
  if (groups.length !== 8) return null;
  const bytes = groups.flatMap((group) => {
    const value = parseInt(group || "0", 16);
    return [value >> 8, value & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}
