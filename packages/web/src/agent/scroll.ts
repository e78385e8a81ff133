import { useCallback, useLayoutEffect, useRef, useState, type RefObject } from "react";

/** Within this many pixels of the end counts as "at the bottom". */
const NEAR = 48;

/**
 * The scrolling of a live list: while the reader is at the bottom it stays there as content arrives;
 * when they have scrolled up it stays where they are (and `away` offers a jump to the latest); when
 * older content is put in front (`firstKey` changes to an earlier item) the view keeps showing the same
 * items, by moving down as much as the content above grew.
 */
export function useStickyScroll(box: RefObject<HTMLElement | null>, firstKey: number | undefined, contentKey: unknown) {
  const [away, setAway] = useState(false);
  const atBottom = useRef(true);
  const before = useRef<{ firstKey: number | undefined; height: number; top: number }>({ firstKey: undefined, height: 0, top: 0 });

  const onScroll = useCallback(() => {
    const el = box.current;
    if (!el) return;
    const bottom = el.scrollHeight - el.scrollTop - el.clientHeight <= NEAR;
    atBottom.current = bottom;
    setAway(!bottom);
    before.current = { ...before.current, height: el.scrollHeight, top: el.scrollTop };
  }, [box]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const was = before.current;
    if (was.firstKey !== undefined && firstKey !== undefined && firstKey < was.firstKey) {
      // Older items went in above: keep the same ones in view.
      el.scrollTop = was.top + (el.scrollHeight - was.height);
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
    before.current = { firstKey, height: el.scrollHeight, top: el.scrollTop };
  }, [box, firstKey, contentKey]);

  // Content that grows after it was laid out (markdown rendered, an image loaded) keeps a reader at the bottom there.
  useLayoutEffect(() => {
    const el = box.current;
    const content = el?.firstElementChild;
    if (!el || !content || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (atBottom.current) el.scrollTop = el.scrollHeight;
      before.current = { ...before.current, height: el.scrollHeight, top: el.scrollTop };
    });
    observer.observe(content);
    return () => observer.disconnect();
  }, [box]);

  const jump = useCallback(() => {
    const el = box.current;
    if (!el) return;
    el.scrollTop = el.scrollHeight;
    atBottom.current = true;
    setAway(false);
  }, [box]);

  return { away, onScroll, jump };
}
