package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/topology"
)

func TestValidQueueName(t *testing.T) {
	for _, name := range []string{"root", "root.default", "root.prod.etl", "root.a b"} {
		assert.True(t, topology.ValidQueueName(name), name)
	}
	for _, name := range []string{"", "root.", "root..a", "root.a.", "root. a", "root.a .b", "rooted", "root/a", "other", ".root", "Root.default"} {
		assert.False(t, topology.ValidQueueName(name), name)
	}
}
