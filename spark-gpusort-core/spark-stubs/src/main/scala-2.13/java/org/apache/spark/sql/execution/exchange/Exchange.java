package org.apache.spark.sql.execution.exchange;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.UnaryExecNode;

/**
 * Spark's {@code Exchange} as javac needs to see it to compile a subclass; never loaded. Spark's
 * class inherits {@code UnaryLike}'s final forwarders {@code withNewChildrenInternal} and
 * {@code mapChildren}, which Scala compiles without generic signatures (returning
 * {@code TreeNode}); javac then rejects any Java subclass, because a {@code TreeNode} return does
 * not override {@code SparkPlan}'s generic one. The JVM has no such check: the descriptors are
 * the same, so a class compiled against this declaration runs against Spark's. Code must call
 * these two methods through {@code SparkPlan}, never through a static type of this class, whose
 * declarations differ from Spark's.
 */
public abstract class Exchange extends SparkPlan implements UnaryExecNode {
  private static final long serialVersionUID = 1L;

  @Override
  public final SparkPlan withNewChildrenInternal(
      scala.collection.immutable.IndexedSeq<SparkPlan> newChildren) {
    throw new UnsupportedOperationException("compile-time declaration only");
  }

  @Override
  public final SparkPlan mapChildren(scala.Function1<SparkPlan, SparkPlan> f) {
    throw new UnsupportedOperationException("compile-time declaration only");
  }

  @Override
  public final scala.collection.immutable.Seq<SparkPlan> children() {
    throw new UnsupportedOperationException("compile-time declaration only");
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    throw new UnsupportedOperationException("compile-time declaration only");
  }

  @Override
  public scala.collection.Iterator<Object> stringArgs() {
    throw new UnsupportedOperationException("compile-time declaration only");
  }
}
