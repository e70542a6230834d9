package rbtree

import "fmt"

// Check verifies the tree's links and the colors' rules: the root is
// black, no red node has a red child, every path from the root to a leaf
// has as many black nodes, every child points to its parent, the items
// are in order, Len counts them and First is the leftmost.
func (t *Tree[T]) Check() error {
	if t.root == nil {
		if t.n != 0 || t.first != nil {
			return fmt.Errorf("empty, but Len is %d and First %p", t.n, t.first)
		}
		return nil
	}
	if t.root.red || t.root.parent != nil {
		return fmt.Errorf("root red %v, parent %p", t.root.red, t.root.parent)
	}
	count := 0
	var walk func(n *Node[T]) (int, error)
	walk = func(n *Node[T]) (int, error) {
		if n == nil {
			return 1, nil
		}
		count++
		for _, c := range []*Node[T]{n.left, n.right} {
			if c == nil {
				continue
			}
			if c.parent != n {
				return 0, fmt.Errorf("a child of %v points to another parent", n.item)
			}
			if n.red && c.red {
				return 0, fmt.Errorf("red %v has a red child", n.item)
			}
		}
		if n.left != nil && t.cmp(n.left.item, n.item) > 0 || n.right != nil && t.cmp(n.right.item, n.item) < 0 {
			return 0, fmt.Errorf("%v is out of order with its children", n.item)
		}
		l, err := walk(n.left)
		if err != nil {
			return 0, err
		}
		r, err := walk(n.right)
		if err != nil {
			return 0, err
		}
		if l != r {
			return 0, fmt.Errorf("%v: %d black nodes on the left, %d on the right", n.item, l, r)
		}
		if !n.red {
			l++
		}
		return l, nil
	}
	if _, err := walk(t.root); err != nil {
		return err
	}
	if count != t.n {
		return fmt.Errorf("%d nodes, Len %d", count, t.n)
	}
	leftmost := t.root
	for leftmost.left != nil {
		leftmost = leftmost.left
	}
	if t.first != leftmost {
		return fmt.Errorf("First is %v, the leftmost node %v", t.first.item, leftmost.item)
	}
	return nil
}
