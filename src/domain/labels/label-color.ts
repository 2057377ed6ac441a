// Label colours as GitLab reads them (Gitlab::Color): the label entities and markdown's label references
// choose their text colour by the same rule.

/** Gitlab::Color::PATTERN: "#RGB" or "#RRGGBB". */
export const COLOR_PATTERN = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;

/** Gitlab::Color#light?: the sum of the channels above 500 (invalid colours are dark). */
export function isLightColor(color: string): boolean {
  if (!COLOR_PATTERN.test(color)) return false;
  const hex = color.length === 4 ? [...color.slice(1)].map((c) => c + c) : (color.slice(1).match(/.{2}/g) as string[]);
  return hex.reduce((sum, h) => sum + Number.parseInt(h, 16), 0) > 500;
}
