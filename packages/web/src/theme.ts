import { useCallback, useEffect, useState } from "react";

/** Light, dark, or the system's preference (no `data-theme` attribute: styles.css follows the media query). */
export type Theme = "light" | "dark" | "system";

const KEY = "svc:theme";
/** Said on window when the theme changes, so every control showing it (menu, palette) follows. */
const CHANGED = "svc:theme-changed";

export function storedTheme(): Theme {
  const value = localStorage.getItem(KEY);
  return value === "light" || value === "dark" ? value : "system";
}

export function applyTheme(theme: Theme): void {
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
}

export function useTheme(): { theme: Theme; setTheme: (theme: Theme) => void } {
  const [theme, set] = useState<Theme>(storedTheme);
  useEffect(() => {
    const follow = () => set(storedTheme());
    window.addEventListener(CHANGED, follow);
    return () => window.removeEventListener(CHANGED, follow);
  }, []);
  const setTheme = useCallback((next: Theme) => {
    if (next === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
    applyTheme(next);
    window.dispatchEvent(new Event(CHANGED));
  }, []);
  return { theme, setTheme };
}
