import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { QueryClientProvider } from "@tanstack/react-query";
import { App } from "./app";
import { queryClient } from "./query";
import { applyTheme, storedTheme } from "./theme";
import "./styles.css";

// Before the first paint: the theme chosen by hand, if any (no inline script: the CSP allows none).
applyTheme(storedTheme());

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
